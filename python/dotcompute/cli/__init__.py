"""The ``dotcompute`` command line (entry point: :func:`dotcompute.cli.main.main`)."""
