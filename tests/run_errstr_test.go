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
