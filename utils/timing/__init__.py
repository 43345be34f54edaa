"""Timing done right: waiting for the backend, the one timer every lesson uses, what a timing
holds, host-device copies and training throughput."""
