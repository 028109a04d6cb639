package tests

import "testing"

// TestRunSuggestionsAsPython: an error python3 reports with a suggestion
// ("NameError: name 'prnt' is not defined. Did you mean: 'print'?", an
// AttributeError's; 3.12+ a from-import's ImportError's and "Did you
// forget to import 'sys'?") ends the same under evalhost run, the whole of
// stdout, stderr and the exit status compared, in every version:
// 3.10-3.12's come from the interpreter's C printer, for exactly those
// types (3.12's traceback module also suggests for a subclass, from at most
// 750 names of a frame in all, and in 3.12.0-1 without the "?" of "Did you
// forget"), 3.13+'s from the traceback module. The code a suggestion runs
// (an object's __dir__, printing here) runs once, as in python3, and not
// at all when the script's sys.excepthook reports the error.
func TestRunSuggestionsAsPython(t *testing.T) {
	const dirOnce = "class A:\n    alpha = 1\n    def __dir__(self):\n        print('__dir__ called')\n        return ['alpha']\n"
	parityScripts(t, []parityScript{
		{"name", "prnt('x')\n"},
		{"attribute", "import math\nmath.sqr(2)\n"},
		{"import_from", "from collections import namedtupl\n"},
		{"forgot_import", "sys.argv\n"},
		{"no_suggestion", "xyzzy_qq\n"},
		{"local_name", "def f():\n    value = 1\n    return valeu\nf()\n"},
		{"self_attribute", "class A:\n    def __init__(self):\n        self.blech = 1\n    def f(self):\n        return blech\nA().f()\n"},
		{"many_globals", "for i in range(700):\n    globals()['v%d' % i] = i\nprnt\n"},
		{"none_attribute", "x = None\nx.__clas__\n"},
		{"chained", "import math\ntry:\n    prnt\nexcept NameError:\n    math.sqr(2)\n"},
		{"context_suppressed", "import math\ntry:\n    math.sqr\nexcept AttributeError:\n    raise ValueError('bad') from None\n"},
		{"group", "import math\ndef f():\n    prnt\ndef g():\n    math.sqr\nerrs = []\nfor fn in (f, g):\n" +
			"    try:\n        fn()\n    except Exception as e:\n        errs.append(e)\nraise ExceptionGroup('two', errs)\n"},
		{"note", "try:\n    prnt\nexcept NameError as e:\n    e.add_note('a note')\n    raise\n"},
		{"subclass", "import dataclasses, math\nraise dataclasses.FrozenInstanceError('no sqr', name='sqr', obj=math)\n"},
		{"empty_message", "import math\nraise AttributeError(name='sqr', obj=math)\n"},
		{"tracebacklimit_zero", "import sys\nsys.tracebacklimit = 0\nprnt\n"},
		{"dir_runs_once", dirOnce + "A().alpah\n"},
		{"user_hook", "import sys, traceback\n" + dirOnce +
			"sys.excepthook = lambda t, v, tb: print('hook:', *traceback.format_exception_only(t, v), end='', file=sys.stderr)\n" +
			"A().alpah\n"},
		{"stderr_replaced", "import atexit, io, sys\nbuf = sys.stderr = io.StringIO()\n" +
			"atexit.register(lambda: print(buf.getvalue(), end=''))\n" + dirOnce + "A().alpah\n"},
		{"hook_raises", "import sys\n" + dirOnce + "def hook(t, v, tb):\n    raise RuntimeError('hook broke')\n" +
			"sys.excepthook = hook\nA().alpah\n"},
		// A subclass's __str__ sees the names it was raised with (3.12+'s
		// traceback module makes the message before it suggests); builtins,
		// so that 3.8-3.10 name the class as python3 does.
		{"subclass_str_reads_name", "import math\nclass E(AttributeError):\n    __module__ = 'builtins'\n" +
			"    def __str__(self):\n        return 'no %s' % self.name\nraise E(name='sqr', obj=math)\n"},
		{"subclass_str_reads_name_name_error", "class E(NameError):\n    __module__ = 'builtins'\n" +
			"    def __str__(self):\n        return 'no %s' % self.name\nraise E(name='prnt')\n"},
		{"subclass_str_reads_name_from", "class E(ImportError):\n    __module__ = 'builtins'\n" +
			"    def __str__(self):\n        return 'no %s in %s' % (self.name_from, self.name)\n" +
			"e = E(name='collections')\ne.name_from = 'namedtupl'\nraise e\n"},
		// A builtin in both hooks' places: python3 calls it; the runner's
		// suggestion must not (its stand-in would go to stdout).
		{"hooks_replaced_by_builtin", "import atexit, io, re, sys\nout, sys.stdout = sys.stdout, io.StringIO()\n" +
			"atexit.register(lambda: out.write(re.sub('0x[0-9a-f]+', 'ADDR', sys.stdout.getvalue())))\n" +
			"sys.excepthook = sys.__excepthook__ = print\nprnt\n"},
		// An exception whose __class__ says it is another type's: its
		// report is its type's.
		{"class_lies", "class E(ValueError):\n    __module__ = 'builtins'\n    __class__ = property(lambda self: NameError)\n" +
			"raise E('boom')\n"},
	})
}

// TestRunErrorTypeNamesAsPython: the type on an error's last line is
// named as python3's report names it: 3.8-3.10's printer (C) writes a
// class of the script's as __main__.E (3.8 by its __name__, 3.9-3.10 its
// __qualname__), 3.11+ as E, in a chain's every exception too.
func TestRunErrorTypeNamesAsPython(t *testing.T) {
	parityScripts(t, []parityScript{
		{"script_class", "class E(Exception):\n    pass\nraise E(1)\n"},
		{"empty_message", "class E(Exception):\n    pass\nraise E\n"},
		{"nested_class", "class A:\n    class E(Exception):\n        pass\nraise A.E('x')\n"},
		{"chained", "class E(Exception):\n    pass\nclass F(E):\n    pass\ntry:\n    raise E('a')\nexcept E:\n    raise F('b')\n"},
		{"other_module", "import json\njson.loads('{')\n"},
	})
}
