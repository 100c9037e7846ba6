"""irc-cache: look at and manage irc's on-disk cache (irc/cache.py).

irc-cache info                      the directory, its size against the cap, entries, bytes and hit
                                    rates per kind (hits and misses as recorded by earlier processes)
irc-cache clear                     remove every entry
irc-cache prune --max-size 500M     remove the least recently used entries until the cache fits
                                    (default size: the cap, IRC_CACHE_MAX_SIZE or 1G)
irc-cache --dir PATH ...            another directory than the one compiles use
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from irc import cache, env


def human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def _size(text: str) -> int:
    try:
        return env.parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def info(root: Path, out) -> None:
    entries = [e for e in cache.entries(root) if not e.path.name.startswith(".")]
    usage = cache.usage(root)
    total = sum(e.size for e in entries)
    print(f"cache directory  {root}{'' if root.is_dir() else ' (does not exist)'}", file=out)
    print(f"size             {human(total)} of {human(cache.max_size())} (the cap: IRC_CACHE_MAX_SIZE)", file=out)
    print(f"{'kind':<10} {'entries':>8} {'size':>10} {'hits':>7} {'misses':>7} {'hit rate':>9}", file=out)
    for kind in sorted({e.kind for e in entries} | set(usage)):
        mine = [e for e in entries if e.kind == kind]
        hits, misses = usage.get(kind, (0, 0))
        rate = f"{100 * hits / (hits + misses):.0f}%" if hits + misses else "-"
        print(
            f"{kind:<10} {len(mine):>8} {human(sum(e.size for e in mine)):>10} {hits:>7} {misses:>7} {rate:>9}",
            file=out,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="irc-cache", description="Look at and manage irc's on-disk cache.")
    parser.add_argument("--dir", type=Path, help="the cache directory (default: IRC_CACHE_DIR, else ~/.cache/irc)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="size, entries by kind, hit rates")
    sub.add_parser("clear", help="remove every entry")
    prune = sub.add_parser("prune", help="remove the least recently used entries until the cache fits")
    prune.add_argument("--max-size", type=_size, default=None, help="e.g. 500M (default: the cap, IRC_CACHE_MAX_SIZE)")
    args = parser.parse_args(argv)
    root = args.dir if args.dir is not None else cache.cache_dir()
    if args.command == "info":
        info(root, sys.stdout)
    elif args.command == "clear":
        removed, freed = cache.clear(root)
        print(f"removed {removed} entries ({human(freed)}) from {root}")
    else:
        limit = cache.max_size() if args.max_size is None else args.max_size
        removed, freed = cache.prune(limit, root)
        left = sum(e.size for e in cache.entries(root))
        print(f"removed {removed} entries ({human(freed)}); {human(left)} left in {root} (limit {human(limit)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
