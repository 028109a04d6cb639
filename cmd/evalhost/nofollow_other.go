//go:build !unix

package main

// oNoFollow is 0 where open has no such flag; O_EXCL still refuses a name
// that is taken, link or not.
const oNoFollow = 0
