"""Reference semantics of the tn ops for linear algebra, convolution, pooling, normalisation and indexing."""

NN_SEMANTICS: dict = {}
