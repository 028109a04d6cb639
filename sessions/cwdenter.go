package sessions

// enteredCwd notes that lang's interpreter took the session's cwd for the
// request (Request.EnterCwd): a later cell's own chdir or cd then lasts to
// the request's end, as in one script.
func (j *Job) enteredCwd(lang string) {
	if j.cwdEntered == nil {
		j.cwdEntered = map[string]bool{}
	}
	j.cwdEntered[lang] = true
}
