"""Importer modules, one per family of aten ops; importing them fills aten_table.IMPORTERS."""

from . import creation, elementwise, reductions, shape  # noqa: F401
