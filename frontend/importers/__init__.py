"""Importer modules, one per family of aten ops; importing them fills aten_table.IMPORTERS."""

from . import creation, elementwise, indexing, lapack, linalg, nn, quant, reductions, shape, sorting, special  # noqa: F401
