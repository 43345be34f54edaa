"""The course's own tools, run from the repository root as modules:

    python -m tools.build [--check]     the notebooks, the README tables and the start page
    python -m tools.retarget OWNER/REPO BRANCH    a fork's location in course.toml, then a build
    python -m tools.agenda [--check]    the agendas of the trainer guide
    python -m tools.slides              reveal.js decks per lesson and language
    python -m tools.site                the course website
    python -m tools.kaggle_dataset      the course as a Kaggle dataset
    python -m tools.make_instructions   data/instructions.jsonl (lesson 07)

What they share about the course (its root, languages, location, lessons and labs) is
`utils.course`.  `setup_cell.py` is no tool: it is the source of every notebook's setup cell.
"""
