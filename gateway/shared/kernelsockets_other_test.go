//go:build !linux

package shared

func helperDial() {}
