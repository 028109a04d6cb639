package tests

import "testing"

// TestRunExceptionStrAsPython: the last line of an uncaught error is
// python3's, in every version: the exception's str() is taken once (a
// __str__ that counts or prints shows it), a str() that raises or gives
// no str is "<exception str() failed>", and the type is named as python3's
// printer names it: 3.8-3.10's C printer with its module even for
// __main__ ("__main__.E: x"), 3.8's last dotted name, "<unknown>" for a
// module that is not a str; 3.11+ as the traceback module does ("E: x").
func TestRunExceptionStrAsPython(t *testing.T) {
	const counted = "n = 0\nclass E(Exception):\n    def __str__(self):\n        global n\n        n += 1\n" +
		"        print('str called', n)\n        return 'msg%d' % n\n"
	parityScripts(t, []parityScript{
		{"str_once", counted + "raise E()\n"},
		{"str_once_chained", counted + "try:\n    raise E()\nexcept E as e:\n    raise ValueError('v') from e\n"},
		{"str_once_context", counted + "try:\n    1/0\nexcept ZeroDivisionError:\n    raise E()\n"},
		{"arg_str_once", "class A:\n    def __str__(self):\n        print('arg str')\n        return 'a'\nraise ValueError(A())\n"},
		{"repr_not_called", "class E(Exception):\n    def __repr__(self):\n        print('repr called')\n        return 'R'\nraise E('x')\n"},
		{"str_is_repr", "class E(Exception):\n    def __repr__(self):\n        print('repr called')\n        return 'R'\n    __str__ = __repr__\nraise E('x')\n"},
		{"str_raises", "class E(Exception):\n    def __str__(self):\n        raise ValueError('no')\nraise E()\n"},
		{"str_not_str", "class E(Exception):\n    def __str__(self):\n        return 5\nraise E()\n"},
		{"str_empty", "class E(Exception):\n    def __str__(self):\n        return ''\nraise E()\n"},
		{"main_class", "class E(Exception):\n    pass\nraise E('x')\n"},
		{"main_class_no_message", "class E(Exception):\n    pass\nraise E\n"},
		{"nested_class", "class A:\n    class E(Exception):\n        pass\nraise A.E('x')\n"},
		{"qualname_set", "class E(Exception):\n    pass\nE.__qualname__ = 'Other.E'\nraise E('x')\n"},
		{"module_none", "class E(Exception):\n    pass\nE.__module__ = None\nraise E('x')\n"},
		{"module_other", "class E(Exception):\n    pass\nE.__module__ = 'pkg.mod'\nraise E('x')\n"},
		{"main_class_chained", "class E(Exception):\n    pass\ntry:\n    raise E('inner')\nexcept E:\n    raise E('outer')\n"},
		{"main_syntax_error", "class S(SyntaxError):\n    pass\nraise S('bad', ('f.py', 1, 1, 'x = ('))\n"},
		{"main_class_name_error", "class E(NameError):\n    pass\nraise E('x', name='prnt')\n"},
	})
}

// TestRunReplacedStderrAsPython: an uncaught error reported on a
// sys.stderr the script set to an object of its own gets python3's
// write() calls, one a piece, each string as python3's printer writes
// it: 3.8-3.12's C printer (the type's module and name, ": ", the text,
// the source line's indent apart, 3.11's empty writes and each caret apart; a
// __str__ that writes there lands inside the last line), 3.13's print()
// of each chunk and its end "". The script logs each write and shows
// the log at the exit.
func TestRunReplacedStderrAsPython(t *testing.T) {
	const writer = "import atexit, os, sys\nclass W:\n    def __init__(self):\n        self.calls = []\n" +
		"    def write(self, s):\n        self.calls.append(s)\n        return len(s)\n    def flush(self):\n        pass\n" +
		"w = sys.stderr = W()\natexit.register(lambda: os.write(1, ('%r\\n' % (w.calls,)).encode()))\n"
	parityScripts(t, []parityScript{
		{"chained", writer + "def f():\n    try:\n        1/0\n    except Exception as e:\n        raise ValueError('bad') from e\nf()\n"},
		{"main_class", writer + "class E(Exception):\n    pass\nraise E('x')\n"},
		{"suggestion", writer + "def f():\n    value = 1\n    return valeu\nf()\n"},
		{"str_writes_there", writer + "class E(Exception):\n    def __str__(self):\n        print('in str', file=sys.stderr)\n" +
			"        return 'msg'\nraise E()\n"},
		{"str_raises", writer + "class E(Exception):\n    def __str__(self):\n        raise ValueError\nraise E()\n"},
		{"tracebacklimit", writer + "sys.tracebacklimit = 1\ndef f():\n    raise KeyError('k')\ndef g():\n    f()\ng()\n"},
		{"note", writer + "e = ValueError('v')\nif hasattr(e, 'add_note'):\n    e.add_note('a note')\nraise e\n"},
	})
}
