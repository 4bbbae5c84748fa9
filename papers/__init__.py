"""The documents the engine serves, one folder (one Python package) each; see README.md here."""
