// Package trustdir judges whether the user evalhost runs as may trust a
// path: whether anyone but that user and root could change what the path
// names or what it holds. It owns that judgement for every directory
// evalhost loads code from (extension modules, the home) or writes the
// user's files into (images, artifacts), so each caller refuses the same
// things with the same words.
//
// Contract:
//   - The user is the effective uid. Root may run code as anyone, so what
//     root owns is trusted as what the user owns is; any other owner is
//     not. [Owner] reads a file's owner; where files carry none (the
//     portable fallback) nothing is refused for its owner, and the mode
//     rules still apply.
//   - A path is judged the way the kernel resolves it, one name at a time
//     from the root, symbolic links followed where they point, so every
//     directory passed through and every link followed is judged, also
//     inside a link's target (a link to another user's link is theirs to
//     repoint). A link must be owned by the user or root. A directory passed
//     through (one above what is judged) must be owned by the user or root
//     and, when everyone may write it, have the sticky bit (/tmp), since
//     whoever may rename its entries can put their own in place of the next
//     one; a group-writable one is let through, as a shared project's group
//     is trusted with its code anyway.
//   - [Way] judges the way to a path and returns what it resolves to,
//     unjudged: the caller judges the end (config judges the home so).
//   - [CodeDir] judges base/rel, a directory code is run from: base and
//     the way to it are passed through; each directory rel names, every
//     one from base down (the .evalhost and the modules of
//     .evalhost/modules), and where a link among them points, must be a
//     directory owned by the user or root and writable by no one else.
//     [CodeFile] judges a file in such a directory the same way: a regular
//     file, owned by the user or root, writable by no one else; [CodeDirIn]
//     a directory in it (a package), without judging the way to it again. [Opened]
//     judges such a file once opened: it must still be so, and be the file
//     judged ([Mark]: its [ID], and its owner then, which may be one a safe
//     directory let own it), so code read from the open file is the code
//     judged.
//   - Safe directories ([Safe]: [SafeFile], [SafeList]) are the user's
//     opt-in for a project another user owns, as git's safe.directory: a
//     team's project owned by a service account or a colleague. Only
//     [CodeDir] and [CodeFile] take them (nil: none), for a project's
//     modules and venv; the home, [Way] and [WriteDir] never do. An entry
//     is "*" (every directory), an absolute directory D, or "D/*" (every
//     path under D, not D: git 2.46's prefix match); a relative or empty
//     entry makes the list an error that says what is wrong and what to
//     write (git warns and skips it; an entry that silently does nothing
//     leaves the user guessing). A list file is one entry a line, blank
//     lines and "#" lines skipped, and must itself be a regular file of the
//     user's or root's that no one else may write, on a way no one else
//     controls: only the user may say whom they trust. The list is read
//     and each entry resolved when a judgement first needs it (a path of
//     another owner), so judging the user's own files reads nothing, and
//     a change applies to the next judgement.
//   - An entry waives only owners. D (its real path: git compares real
//     paths too) lets D's owner own D and what is under it; a third user's
//     file or directory in it is still refused. A directory above D that
//     D's owner owns passes too (a colleague's home above their project:
//     they could replace D with their own anyway); any other owner there,
//     or a link on the way to D that is not the user's or root's, makes
//     the entry waive nothing, since whoever controls the way could put
//     their own D in its place. Nor may D, or a directory of another
//     user's above it, be in a directory everyone may write (/tmp, sticky
//     or not): the entry trusts whoever owns D when it is read, and once
//     its owner removes it anyone could make it again as theirs; such a D
//     is not advised either. "D/*" lets any owner own what is under D,
//     the way to D judged as always; "*" waives every owner. No entry
//     waives a mode: a directory everyone may write without the sticky bit
//     is refused wherever it is, and code dirs and files writable by group
//     or others still are. Where a link leads is judged where it points.
//   - A refusal for an owner, judged with a list, says in Listing which
//     directory to list to waive it (the project's, when its owner is the
//     one refused, else the directory refused) and [Error.Fix] the command
//     (echo DIR >> FILE; printf '%s\n' for a DIR with a backslash, which
//     sh's echo would read as an escape), [Error.Trust] the sentence; when
//     the list could not help (unreadable, an entry that waives nothing, an
//     entry of another owner, a DIR no line can list: a newline or space at
//     an end in it, or a trailing "/*"), Note says why, and Reason carries
//     it. A DIR is another user's to name: the command lists it and only it.
//   - [WriteDir] judges a directory the user's files are created in: a
//     directory owned by the user or root that others may write only with
//     the sticky bit (then they can add names, which the caller's O_EXCL
//     creates step around, but not replace the user's files). [MakeIn]
//     judges the directory one is to be made in as WriteDir judges it
//     once made (passed through), so nothing is made where it would be
//     refused.
//   - A refusal is an [*Error] (matching [ErrUntrusted]) that names the
//     path judged, where on the way the problem is and what it is; its
//     Reason reads after "refusing X: ", and Fix is the command that
//     mends it when one does. Where a symbolic link led elsewhere, the
//     problem is the target's (At) and the reason names both the path as
//     given and the target ("m.py: it leads to /x/m.py, which is owned by
//     uid N"; Via is the link's path), and a fix or a safe directory to
//     list names the target, which is what must change. A path in this text (and in the refusals
//     of its callers) is printed by [Shown]: as it is, or quoted Go-style
//     when it holds a character that is not printable or is not UTF-8, so
//     a name another user chose cannot fake a line of advice; in a command,
//     [ShellQuote] writes such a path $'...' with the same escapes, and
//     [ShownError] prints an os error (an *fs.PathError's path) so.
//     Anything missing on the way is an error
//     matching fs.ErrNotExist, as os.Lstat gives it.
//   - A judgement holds only as long as nobody but the user and root (and
//     the group of a group-writable directory passed through) changes the
//     path, which is what it establishes; a caller that must be sure the
//     thing it then opens is the one judged compares [ID]s ([IDOf],
//     [Opened]), as the runner does for extension modules and run for its
//     images directory.
package trustdir
