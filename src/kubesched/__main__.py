"""The `kubesched` command's entry (also `python -m kubesched`): imports the command line with the
collector off and exits without a last collection (kubesched.startup says why)."""

import sys


def main() -> int:
    from kubesched.startup import exit_without_collecting, without_gc

    with without_gc():
        from kubesched import cli
    code = cli.main()
    exit_without_collecting()
    return code


if __name__ == "__main__":
    sys.exit(main())
