"""torch.compile's side of irc: Dynamo's graphs through AOT autograd to runnable graphs.

backend.py        irc.backend: AOT autograd, then per graph the frontend (FX -> tn) and the driver
                  (irc/compiler.py); the whole-graph fallback to eager; compile_function (no Dynamo)
partition.py      what a training forward saves for its backward (AOT autograd's min-cut)
aliases.py        outputs that are views of inputs or of other outputs, replayed instead of computed
saved_layouts.py  a forward's saved activations handed to the backward in the layout computed
warm.py           warm starts: a graph compiled before skips the compiler
compile_log.py    what the backend logs about each graph
"""
