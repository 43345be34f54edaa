"""The machine a notebook runs on: the platform (Colab, Kaggle, local), its hardware, the
course's hardware profile, the chips' data sheets, and where tensors go."""
