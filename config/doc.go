// Package config reads evalhost's configuration from the environment, so
// that a Go program using evalhost's packages gets the same defaults, the
// same checks and the same messages as the evalhost command.
//
// Contract:
//   - [Home] is $EVALHOST_HOME, else ~/.evalhost (~ is $HOME, else the
//     user's home in the password database), made absolute (a relative
//     HOME too, against the working directory). A missing home
//     is created 0700. A home, or its modules directory, that is not owned
//     by the effective user or is writable by group or others is refused
//     with an [*UnsafeDirError] ([ErrUnsafe]) naming the path, what is
//     wrong and the fix, as ssh refuses a loose ~/.ssh; so is a home that
//     another user could swap for their own: a directory above it owned by
//     someone other than the user or root, or world-writable without the
//     sticky bit, or a symbolic link on the way that another user owns
//     (group-writable parents are allowed). With no home at all
//     the error is [ErrNoHome] and says to set EVALHOST_HOME; there is
//     never a silent fallback to a shared temporary directory. [CheckDir]
//     is the check, for other directories code is loaded from.
//   - [Languages] reads PI_PY: "0"/"bash" shell only, "1"/"py" Python only,
//     "mix"/"both"/unset both; anything else is an error.
//   - [Starters] picks the Python backend ([Backend]: its Name, else
//     $EVALHOST_BACKEND, else the gateway when $PI_PYTHON_GATEWAY_URL is
//     set, else the runner; $PI_PYTHON_GATEWAY_TOKEN authenticates) and
//     replaces the starters of languages PI_PY turned off by ones that fail
//     every cell saying so. An unknown backend is [ErrBackend].
//   - [ArtifactStore] is the spill store: $PI_ARTIFACTS_DIR, else
//     <home>/artifacts, which (only) is pruned of week-old artifacts.
//   - [Sessions] puts them together into a sessions.Config.
//
// Every function reads the environment when called; nothing is cached.
package config
