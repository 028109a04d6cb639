"""Prints, as a JSON list, the injected cell papermill writes for each
case read as JSON from stdin: a list of flags [flag, args...] in
command-line order, merged as papermill's CLI merges them (-f, then -y,
then -p, then -r)."""
import json
import sys

import yaml
from papermill.cli import _resolve_type
from papermill.iorw import NoDatesSafeLoader, read_yaml_file
from papermill.translators import translate_parameters


def source(flags):
    params = {}
    for flag, *args in flags:
        if flag == "-f":
            params.update(read_yaml_file(args[0]) or {})
    for flag, *args in flags:
        if flag == "-y":
            params.update(yaml.load(args[0], Loader=NoDatesSafeLoader) or {})
    for flag, *args in flags:
        if flag == "-p":
            params[args[0]] = _resolve_type(args[1])
    for flag, *args in flags:
        if flag == "-r":
            params[args[0]] = args[1]
    return translate_parameters("python3", "python", params, "Parameters")


json.dump([source(flags) for flags in json.load(sys.stdin)], sys.stdout)
