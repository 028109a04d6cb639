//go:build !linux

package shared

// helperUnmapped is Linux's (owner_linux_test.go): no user namespaces here.
func helperUnmapped() {}
