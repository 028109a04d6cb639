package launch

// Exe is the file to re-execute as a reaper: /proc/self/exe still names
// this program's file when its path has been replaced or deleted since it
// started.
func Exe() (string, error) { return "/proc/self/exe", nil }
