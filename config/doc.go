// Package config reads evalhost's configuration from the environment, so
// that a Go program using evalhost's packages gets the same defaults, the
// same checks and the same messages as the evalhost command.
//
// Contract:
//   - [Home] is $EVALHOST_HOME, else ~/.evalhost (~ is $HOME, else the
//     user's home in the password database), made absolute (a relative
//     HOME too, against the working directory). A missing home
//     is created 0700: an EVALHOST_HOME with what is missing above it,
//     ~/.evalhost by one mkdir in a user's home that exists, never the
//     home or a directory above it (a HOME that does not exist, as system
//     users' /nonexistent, or that goes or becomes a link to nowhere
//     while Home looks, is [ErrNoHome], saying to set EVALHOST_HOME: root
//     made it, with its parents). A home, or its modules directory, that is not owned
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
//   - The home's safe-directories file (sessions.SafeDirectoriesFile) is
//     the user's opt-in for a project another user owns, as git's
//     safe.directory in the user's global config: one absolute directory a
//     line ("*" for all, "D/*" for all under D), whose .venv and
//     .evalhost/modules are then used though that user owns them
//     (internal/trustdir says exactly what it waives: owners, never a
//     directory everyone may write). It is a file in the home rather than
//     an environment variable because the home is already judged the
//     user's alone, and because every evalhost process of the user must
//     agree: the judgements read it when they need it, so the background
//     process of run --session (which keeps the environment it started
//     with) and an MCP server an agent started with a trimmed environment
//     see what the user's shell sees, and a listing lasts, as git's does.
//     Config does not read it; a project's own files never can list it.
//   - [Languages] reads PI_PY: "0"/"bash" shell only, "1"/"py" Python only,
//     "mix"/"both"/unset both; anything else is an error.
//   - [Starters] picks the Python backend ([Backend]: its Name, else
//     $EVALHOST_BACKEND, else the gateway when $PI_PYTHON_GATEWAY_URL is
//     set, else the runner; $PI_PYTHON_GATEWAY_TOKEN authenticates) and
//     replaces the starters of languages PI_PY turned off by ones that fail
//     every cell saying so. An unknown backend is [ErrBackend]. A
//     PI_PYTHON_GATEWAY_URL that is not a gateway's address
//     ([CheckGatewayURL], gateway.ParseURL: its text only, nothing is
//     contacted) is an error naming the variable and its value, whichever
//     backend is chosen.
//     [Backend.Resolved] names the backend that rule comes to.
//   - [ArtifactStore] is the spill store: $PI_ARTIFACTS_DIR, else
//     <home>/artifacts, which (only) is pruned of week-old artifacts and
//     kept under $EVALHOST_ARTIFACTS_MAX; a bad value of that is an error.
//     A relative PI_ARTIFACTS_DIR is made absolute against the working
//     directory, as EVALHOST_HOME is. A missing PI_ARTIFACTS_DIR is made (0700) at the first spill as
//     ~/.evalhost is, by one mkdir in a directory that exists, never with
//     what is above it: one whose parent is missing (or that is a file,
//     or a link to nothing) is an error, as EVALHOST_HOME's problems are.
//     It differs from EVALHOST_HOME, made with its parents, as the user's
//     HOME does: it is the user's directory (never pruned, its modes
//     kept), which an agent's host names and has made, not evalhost's.
//   - [Sessions] puts them together into a sessions.Config; a bad value
//     is its error.
//
// Every function reads the environment when called; nothing is cached.
package config
