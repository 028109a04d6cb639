"""Prints, as a JSON list, the injected cell papermill writes for each
case read as JSON from stdin (a list of flags [flag, args...] in
command-line order, merged as papermill's CLI merges them: -f, then -y,
then -p, then -r), and the metadata.papermill.parameters nbformat writes
for it (json.dumps, sort_keys, ensure_ascii=False; one line; NaN and
infinities as json.dumps writes them: NaN, Infinity, -Infinity)."""
import json
import sys

# Before nbformat, nbclient, papermill or jupytext, which import jsonschema:
# without rfc3987_syntax, whose grammar jsonschema's import builds for a
# format check none of them makes (~1.3 s of CPU). testkit.NbformatPrelude.
sys.modules.setdefault("rfc3987_syntax", None)

import yaml
from papermill.cli import _resolve_type
from papermill.iorw import NoDatesSafeLoader, read_yaml_file
from papermill.translators import translate_parameters


def parameters(flags):
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
    return params


def key(k):
    """The string json.dumps makes of a mapping key (it can sort only
    strings, so papermill fails to write a mapping with keys of mixed types;
    evalhost writes them as json.dumps makes them strings)."""
    return k if isinstance(k, str) else json.dumps(k)


def keyed(v):
    if isinstance(v, list):
        return [keyed(e) for e in v]
    if isinstance(v, dict):
        return {key(k): keyed(e) for k, e in v.items()}
    return v


def case(flags):
    params = parameters(flags)
    metadata = json.dumps(keyed(params), sort_keys=True, ensure_ascii=False, separators=(",", ": "))
    return [translate_parameters("python3", "python", params, "Parameters"), metadata]


json.dump([case(flags) for flags in json.load(sys.stdin)], sys.stdout)
