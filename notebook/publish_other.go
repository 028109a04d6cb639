//go:build !linux

package notebook

// publishNew links temp at path, which fails while path is taken (an
// error matching fs.ErrExist), and removes the temp name.
func publishNew(temp, path string) error { return linkNew(temp, path) }
