"""Loop fusion in three parts: legality (may it?), transform (the mechanics), policy (should it?); fuse.py drives them."""
