"""torch's libraries on the CPU target: what eager would call for products and convolutions.

externs.py      matmul / linear / bmm / convolution through the fastest torch library path
extern_ops.py   mem.extern regions -> library calls (mm, bmm, conv, reshape) or the reference
mm_rules.py     the library path an f32 product takes, decided before any call (for the passes' rules)
conv_layout.py  torch's convolution timed in each layout (select-layout's timer)
measured.py     records measured once per machine, kept in irc.cache
tuning.py       the thresholds the library rules and timings read (small products, transposed products, ...)
"""
