"""The suite importer: turns another benchmark's task files into problem files, reading them with `ast` only."""
