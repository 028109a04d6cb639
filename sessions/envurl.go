package sessions

import "strings"

// StripURLCredentials removes the user-info ("user:password@") from every
// URL in an environment variable's value, which may be a space-separated
// list (PIP_EXTRA_INDEX_URL). A proxy or index that needs them then answers
// 407 or 401 to a cell, which says what is missing; a cell that could read
// them could send them anywhere. Values of proxy and URL variables
// (*_PROXY, *_proxy, *_URL) are URLs even without a scheme
// ("user:pw@proxy:3128", as curl and pip accept them); in other values only
// "scheme://user@host" is taken for a URL, so "git@host:repo" stays.
func StripURLCredentials(name, value string) string {
	if !strings.Contains(value, "@") {
		return value
	}
	upper := strings.ToUpper(name)
	urlVar := strings.HasSuffix(upper, "_PROXY") || strings.HasSuffix(upper, "_URL")
	fields := strings.Split(value, " ")
	for i, f := range fields {
		fields[i] = stripUserInfo(f, urlVar)
	}
	return strings.Join(fields, " ")
}

// stripUserInfo drops the user-info of one URL; schemeless says a URL
// without "scheme://" counts.
func stripUserInfo(u string, schemeless bool) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		if !schemeless {
			return u
		}
		scheme, rest = "", u
	} else {
		scheme += "://"
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	at := strings.LastIndex(authority, "@")
	if at < 0 {
		return u
	}
	return scheme + rest[at+1:]
}
