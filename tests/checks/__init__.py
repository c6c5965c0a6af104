"""One file per per-pair check: the check class called directly on tiny inline pairs."""
