"""The `kubesched` command's entry (also `python -m kubesched`): imports the command line with the
collector off (kubesched.startup says why)."""

import sys


def main() -> int:
    from kubesched.startup import without_gc

    with without_gc():
        from kubesched import cli
    return cli.main()


if __name__ == "__main__":
    sys.exit(main())
