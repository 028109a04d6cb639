package streamsink

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
)

// spillOnce runs one cell's worth of output through a sink on st that is
// sure to spill, and returns its dump; a failed spill is in its notices.
func spillOnce(t *testing.T, st *Store, size int) Dump {
	t.Helper()
	s := newSink(t, Options{Store: st, MaxBytes: 64})
	line := strings.Repeat("x", 99) + "\n"
	for range size / len(line) {
		s.Write(frames.TypeStdout, []byte(line))
	}
	s.Close()
	return s.Dump()
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func dirTotal(t *testing.T, dir string) int64 {
	t.Helper()
	var total int64
	for _, name := range listDir(t, dir) {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		total += fi.Size()
	}
	return total
}

// TestArtifactModes (issue 19 item 6): artifacts are 0600, a directory the
// store makes is 0700, and the notice says where the output went.
func TestArtifactModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home", "artifacts")
	st := NewStore(dir)
	d := spillOnce(t, st, 1000)
	if _, _, err := st.WriteFile("png", []byte("png")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v (%v), want 0700", fi.Mode().Perm(), err)
	}
	for _, name := range listDir(t, dir) {
		if fi, _ := os.Stat(filepath.Join(dir, name)); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", name, fi.Mode().Perm())
		}
	}
	if d.ArtifactPath != filepath.Join(dir, d.ArtifactID) || !slices.ContainsFunc(d.Notices, func(n string) bool {
		return strings.HasPrefix(n, "[full output: artifact://"+d.ArtifactID) && strings.HasSuffix(n, " at "+d.ArtifactPath+"]")
	}) {
		t.Errorf("no notice names the artifact's path %s: %q", d.ArtifactPath, d.Notices)
	}
}

// TestStoreDirectoryModes: a directory the store owns with loose modes is
// tightened, another user's is refused; a user's own directory keeps its
// modes but is refused when others may replace files in it.
func TestStoreDirectoryModes(t *testing.T) {
	tests := []struct {
		name     string
		mode     fs.FileMode
		userDir  bool
		chown    bool // owned by another user (needs root)
		wantMode fs.FileMode
		refused  string
	}{
		{"own 0755 is tightened", 0o755, false, false, 0o700, ""},
		{"own 0777 is tightened", 0o777, false, false, 0o700, ""},
		{"own 0700 stays", 0o700, false, false, 0o700, ""},
		{"own but another user's is refused", 0o700, false, true, 0o700, "belongs to another user (uid 4242)"},
		{"user's 0755 is left as it is", 0o755, true, false, 0o755, ""},
		{"user's sticky 1777 is left as it is", 0o777 | fs.ModeSticky, true, false, 0o777 | fs.ModeSticky, ""},
		{"user's 0777 is refused", 0o777, true, false, 0o777, "writable by group and others (mode 0777) without the sticky bit"},
		{"user's 0775 is refused", 0o775, true, false, 0o775, "writable by group (mode 0775) without the sticky bit"},
		{"user's but another user's is refused", 0o755, true, true, 0o755, "it is owned by uid 4242, not by you"},
		{"user's but another user's sticky 1777 is refused", 0o777 | fs.ModeSticky, true, true, 0o777 | fs.ModeSticky, "it is owned by uid 4242"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "artifacts")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, tt.mode); err != nil {
				t.Fatal(err)
			}
			if tt.chown {
				if os.Getuid() != 0 {
					t.Skip("needs root to give the directory to another user")
				}
				if err := os.Chown(dir, 4242, 4242); err != nil {
					t.Fatal(err)
				}
			}
			st := NewStoreWith(dir, StoreOptions{UserDir: tt.userDir})
			f, _, err := st.Create("eval.log")
			if tt.refused != "" {
				if !errors.Is(err, ErrUnsafeDir) || !strings.Contains(err.Error(), tt.refused) || !strings.Contains(err.Error(), dir) {
					t.Fatalf("Create = %v, want ErrUnsafeDir naming %s and saying %q", err, dir, tt.refused)
				}
				if names := listDir(t, dir); len(names) != 0 {
					t.Errorf("a refused directory got files: %v", names)
				}
				d := spillOnce(t, st, 1000)
				if d.ArtifactID != "" || !slices.ContainsFunc(d.Notices, func(n string) bool { return strings.Contains(n, tt.refused) }) {
					t.Errorf("a sink on a refused directory: artifact %q, notices %q", d.ArtifactID, d.Notices)
				}
			} else if err != nil {
				t.Fatal(err)
			} else {
				f.Close()
			}
			fi, err := os.Stat(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode() & (fs.ModePerm | fs.ModeSticky); got != tt.wantMode {
				t.Errorf("directory mode %v, want %v", got, tt.wantMode)
			}
		})
	}
}

// TestUserDirWayRefused: $PI_ARTIFACTS_DIR is refused when another user
// can swap it: a link of theirs, or a directory of theirs above it.
func TestUserDirWayRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give files to another user")
	}
	tests := []struct {
		name    string
		setup   func(t *testing.T, root string) string
		refused string
	}{
		{"a link of another user's", func(t *testing.T, root string) string {
			real := filepath.Join(root, "real")
			link := filepath.Join(root, "artifacts")
			if err := os.Mkdir(real, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(real, link); err != nil {
				t.Fatal(err)
			}
			if err := os.Lchown(link, 4242, 4242); err != nil {
				t.Fatal(err)
			}
			return link
		}, "it is a symbolic link owned by uid 4242"},
		{"under another user's directory", func(t *testing.T, root string) string {
			theirs := filepath.Join(root, "theirs")
			if err := os.Mkdir(theirs, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(theirs, 4242, 4242); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(theirs, "artifacts")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			return dir
		}, "above it is owned by uid 4242"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.setup(t, t.TempDir())
			st := NewStoreWith(dir, StoreOptions{UserDir: true})
			if _, _, err := st.Create("eval.log"); !errors.Is(err, ErrUnsafeDir) || !strings.Contains(err.Error(), tt.refused) ||
				!strings.Contains(err.Error(), dir+" (PI_ARTIFACTS_DIR)") {
				t.Fatalf("Create = %v, want ErrUnsafeDir naming %s and saying %q", err, dir, tt.refused)
			}
			if names := listDir(t, dir); len(names) != 0 {
				t.Errorf("a refused directory got files: %v", names)
			}
		})
	}
}

// TestMaxTotalRemovesOldestWhenASpillEnds: each finished artifact brings
// the directory back under MaxTotal by removing the oldest, not the newest
// and not one being written, even by another Store (another process).
func TestMaxTotalRemovesOldestWhenASpillEnds(t *testing.T) {
	dir := t.TempDir()
	const limit = 5000
	st := NewStoreWith(dir, StoreOptions{MaxTotal: limit})
	other := NewStore(dir)
	open, openID, err := other.Create("eval.log")
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	if _, err := open.Write(make([]byte, 1500)); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(open.Name(), old, old) // the oldest of all, but being written
	var ids []string
	for i := range 8 {
		d := spillOnce(t, st, 1500)
		ids = append(ids, d.ArtifactID)
		names := listDir(t, dir)
		if !slices.Contains(names, d.ArtifactID) || !slices.Contains(names, openID) {
			t.Fatalf("spill %d: the new artifact or the one being written was removed: %v", i, names)
		}
		if total := dirTotal(t, dir); total > limit {
			t.Errorf("spill %d: %d bytes in the store, over the cap %d", i, total, limit)
		}
		// What is left of this store's artifacts is the newest ones.
		var kept []string
		for _, id := range ids {
			if slices.Contains(names, id) {
				kept = append(kept, id)
			}
		}
		if len(kept) == 0 || !slices.Equal(kept, ids[len(ids)-len(kept):]) {
			t.Errorf("spill %d: kept %v of %v, want the newest", i, kept, ids)
		}
	}
	if got := listDir(t, dir); len(got) != 3 {
		t.Errorf("left %v, want the open artifact and the two newest spills", got)
	}
}

// TestRetentionWhileRunning: an artifact past the retention goes when a
// later one is finished, not only when a command starts.
func TestRetentionWhileRunning(t *testing.T) {
	dir := t.TempDir()
	st := NewStoreWith(dir, StoreOptions{Retention: time.Hour})
	first := spillOnce(t, st, 1000)
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(first.ArtifactPath, old, old)
	second := spillOnce(t, st, 1000)
	if got := listDir(t, dir); !slices.Equal(got, []string{second.ArtifactID}) {
		t.Errorf("left %v, want only %s", got, second.ArtifactID)
	}
}

// TestUserDirIsNeverCleaned: PI_ARTIFACTS_DIR is the user's to clean.
func TestUserDirIsNeverCleaned(t *testing.T) {
	dir := t.TempDir()
	st := NewStoreWith(dir, StoreOptions{UserDir: true, MaxTotal: 100, Retention: time.Millisecond})
	old := time.Now().Add(-30 * 24 * time.Hour)
	os.WriteFile(filepath.Join(dir, "1.eval.log"), make([]byte, 500), 0o600)
	os.Chtimes(filepath.Join(dir, "1.eval.log"), old, old)
	for range 3 {
		spillOnce(t, st, 1000)
	}
	if n, err := st.Prune(0); n != 0 || err != nil {
		t.Errorf("Prune of a user's directory: %d, %v", n, err)
	}
	if got := listDir(t, dir); len(got) != 4 {
		t.Errorf("left %v, want all 4 artifacts", got)
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1073741824", 1 << 30, true},
		{"512M", 512 << 20, true},
		{"2G", 2 << 30, true},
		{"2g", 2 << 30, true},
		{"1GiB", 1 << 30, true},
		{"1GB", 1 << 30, true},
		{"64K", 64 << 10, true},
		{"1T", 1 << 40, true},
		{"0", 0, true},
		{" 5M ", 5 << 20, true},
		{"", 0, false},
		{"-1", 0, false},
		{"1.5G", 0, false},
		{"lots", 0, false},
		{"9999999999T", 0, false},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// Sizes are read in binary units (TestParseSize), so notices print them in
// binary units: a 1 GiB cap is "1.0 GiB", never "1.1 GB".
func TestHumanBytes(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"}, {10000, "9.8 KiB"},
		{512 << 20, "512.0 MiB"}, {1 << 30, "1.0 GiB"}, {2 << 30, "2.0 GiB"}, {1 << 40, "1.0 TiB"},
	} {
		if got := humanBytes(tt.n); got != tt.want {
			t.Errorf("humanBytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestStoreFromEnv(t *testing.T) {
	home := t.TempDir()
	mine := t.TempDir()
	file := filepath.Join(mine, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	nowhere := filepath.Join(mine, "link")
	if err := os.Symlink(filepath.Join(mine, "no", "such"), nowhere); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(mine, "no", "such")
	t.Chdir(mine) // for a relative PI_ARTIFACTS_DIR
	tests := []struct {
		name, artifacts, max string
		wantDir              string
		wantOpt              StoreOptions
		wantErr              string
	}{
		{"defaults", "", "", filepath.Join(home, "artifacts"), StoreOptions{}, ""},
		{"cap", "", "2G", filepath.Join(home, "artifacts"), StoreOptions{MaxTotal: 2 << 30}, ""},
		{"no cap", "", "0", filepath.Join(home, "artifacts"), StoreOptions{MaxTotal: -1}, ""},
		// Refused, no store: a typo taken for the default cap removed
		// artifacts a user meant to keep.
		{"bad cap", "", "big", "", StoreOptions{}, `EVALHOST_ARTIFACTS_MAX="big": want a size such as 1073741824 (bytes), 512M or 2G, or 0 for no cap (the most the artifacts directory holds; default 1.0 GiB): set it so, or unset it`},
		{"negative cap", "", "-1", "", StoreOptions{}, `EVALHOST_ARTIFACTS_MAX="-1": want a size`},
		{"user's directory", mine, "", mine, StoreOptions{UserDir: true}, ""},
		{"user's directory to make", filepath.Join(mine, "new"), "", filepath.Join(mine, "new"), StoreOptions{UserDir: true}, ""},
		// Absolute, as EVALHOST_HOME: the background process runs in /.
		{"user's directory relative", "rel", "", filepath.Join(mine, "rel"), StoreOptions{UserDir: true}, ""},
		// Refused, no store: the first spill would not make it (as root,
		// /nonexistent/... was made with its parents), and every spill's
		// notice would say so where the command could say it once.
		{"user's directory in a missing one", missing, "", "", StoreOptions{},
			`PI_ARTIFACTS_DIR="` + missing + `": want a directory, or one evalhost can make in a directory that exists (` + filepath.Dir(missing) +
				` does not exist; evalhost makes the artifacts directory alone, never what is above it): make it (mkdir -p ` + missing +
				`), or unset it to keep spilled output in ` + filepath.Join(home, "artifacts")},
		{"user's directory a file", file, "", "", StoreOptions{}, `PI_ARTIFACTS_DIR="` + file + `": want a directory, or one evalhost can make in a directory that exists (` + file + ` is not a directory;`},
		{"user's directory in a file", filepath.Join(file, "a"), "", "", StoreOptions{}, `(` + file + ` is not a directory;`},
		{"user's directory a link to nowhere", nowhere, "", "", StoreOptions{}, `(` + nowhere + ` is a symbolic link to ` + missing + `, which does not exist;`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PI_ARTIFACTS_DIR", tt.artifacts)
			t.Setenv(MaxTotalEnv, tt.max)
			st, err := StoreFromEnv(home)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
			if tt.wantDir == "" {
				if st != nil {
					t.Errorf("store %+v with the error, want none", st)
				}
				return
			}
			if st == nil || st.Dir() != tt.wantDir || st.opt != tt.wantOpt {
				t.Errorf("store %+v, want dir %s and options %+v", st, tt.wantDir, tt.wantOpt)
			}
		})
	}
}

// TestStoreFromEnvEnforce: opening the store touches nothing on disk (a
// command that never spills pays no listing); Enforce, as a long-lived
// process starts, brings a directory over a (lowered) cap under it, and
// removes nothing from the user's own directory.
func TestStoreFromEnvEnforce(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "artifacts")
	os.Mkdir(dir, 0o700)
	all := []string{"1.eval.log", "2.png", "3.eval.log"}
	for i, name := range all {
		p := filepath.Join(dir, name)
		os.WriteFile(p, make([]byte, 600), 0o600)
		mod := time.Now().Add(time.Duration(i-10) * time.Minute)
		os.Chtimes(p, mod, mod)
	}
	t.Setenv(MaxTotalEnv, "1300")
	t.Setenv("PI_ARTIFACTS_DIR", dir) // the user's: never pruned
	mine, err := StoreFromEnv(home)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := mine.Enforce(); n != 0 || err != nil {
		t.Errorf("Enforce on the user's directory = %d, %v; want nothing removed", n, err)
	}
	t.Setenv("PI_ARTIFACTS_DIR", "")
	st, err := StoreFromEnv(home)
	if err != nil {
		t.Fatal(err)
	}
	if got := listDir(t, dir); !slices.Equal(got, all) {
		t.Errorf("opening the store left %v, want all of %v", got, all)
	}
	if n, err := st.Enforce(); n != 1 || err != nil {
		t.Errorf("Enforce = %d, %v; want 1 removed", n, err)
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{"2.png", "3.eval.log"}) {
		t.Errorf("left %v, want the two newest", got)
	}
}

// TestNoSpill (issue 16): output the caller shows whole is not also written
// to disk; its tail and counts are still kept, and large display payloads
// still go to the store.
func TestNoSpill(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts")
	s := newSink(t, Options{Store: NewStore(dir), MaxBytes: 64, NoSpill: true, InlineLimit: 100})
	line := strings.Repeat("x", 99) + "\n"
	for range 1000 {
		s.Write(frames.TypeStdout, []byte(line))
	}
	s.Frame(frames.Frame{Type: frames.TypeDisplay, Bundle: frames.Bundle{
		"text/plain": []byte(`"big"`), "text/html": []byte(`"` + strings.Repeat("h", 500) + `"`)}})
	d := closeDump(t, s)
	if d.ArtifactID != "" || d.ArtifactPath != "" || !d.Truncated || d.TotalBytes < 100000 {
		t.Errorf("dump: artifact %q %q, truncated %v, total %d; want no artifact of a truncated 100 kB",
			d.ArtifactID, d.ArtifactPath, d.Truncated, d.TotalBytes)
	}
	for _, n := range d.Notices {
		if strings.Contains(n, Scheme) && !strings.Contains(n, "text/html") {
			t.Errorf("notice names an artifact: %q", n)
		}
	}
	if len(d.Payloads) != 1 {
		t.Fatalf("payloads %+v, want the html moved to the store", d.Payloads)
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{d.Payloads[0].Artifact[len(Scheme):]}) {
		t.Errorf("store holds %v, want only the display payload", got)
	}
}

// TestArtifactBoundWhileWriting: the store's cap bounds one artifact while
// it is written, not only once it is finished; the artifact keeps a head
// and a tail and the notice says it was capped. A user's directory has no
// cap, so its artifact keeps every byte.
func TestArtifactBoundWhileWriting(t *testing.T) {
	const limit = 10000
	line := strings.Repeat("x", 99) + "\n"
	for _, tt := range []struct {
		name  string
		opt   StoreOptions
		capOf int64 // 0: full artifact
	}{
		{"own directory", StoreOptions{MaxTotal: limit}, limit},
		{"user's directory", StoreOptions{MaxTotal: limit, UserDir: true}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := NewStoreWith(t.TempDir(), tt.opt)
			s := newSink(t, Options{Store: st, MaxBytes: 64})
			var peak int64
			for i := range 1000 {
				s.Write(frames.TypeStdout, []byte(line))
				if p := s.Dump().ArtifactPath; p != "" && i%50 == 0 {
					fi, err := os.Stat(p)
					if err != nil {
						t.Fatal(err)
					}
					peak = max(peak, fi.Size())
				}
			}
			if s.spill.ring != nil && tt.capOf == 0 {
				t.Errorf("an uncapped artifact holds a ring of %d bytes", len(s.spill.ring))
			}
			d := closeDump(t, s)
			fi, err := os.Stat(d.ArtifactPath)
			if err != nil {
				t.Fatal(err)
			}
			if tt.capOf == 0 {
				if fi.Size() != 100000 || peak == 0 {
					t.Errorf("artifact of %d bytes (peak %d while written), want all 100000", fi.Size(), peak)
				}
				return
			}
			if peak == 0 || peak > tt.capOf || fi.Size() > tt.capOf+200 {
				t.Errorf("artifact peaked at %d bytes while written and ends at %d; cap %d", peak, fi.Size(), tt.capOf)
			}
			got, _ := os.ReadFile(d.ArtifactPath)
			if !strings.HasPrefix(string(got), line) || !strings.HasSuffix(string(got), line) || !strings.Contains(string(got), "[ARTIFACT TRUNCATED: ") {
				t.Errorf("artifact lacks its head, its tail or the truncation line: %.200q…", got)
			}
			want := "[head and tail of the output (artifact capped at 9.8 KiB): " + Scheme + d.ArtifactID
			if !slices.ContainsFunc(d.Notices, func(n string) bool { return strings.HasPrefix(n, want) }) {
				t.Errorf("notices %q lack %q", d.Notices, want)
			}
		})
	}
}

// TestSmallSpillHoldsNoRing: a capped artifact makes its in-memory tail
// only once its head is full, so a small spill costs no megabytes.
func TestSmallSpillHoldsNoRing(t *testing.T) {
	s := newSink(t, Options{Store: NewStore(t.TempDir()), MaxBytes: 64})
	for range 100 {
		s.Write(frames.TypeStdout, []byte("a line of output\n"))
	}
	if s.spill.cap != DefaultMaxTotal || s.spill.f == nil || s.spill.ring != nil {
		t.Errorf("cap %d, file %v, ring of %d bytes; want the default cap, an open file and no ring",
			s.spill.cap, s.spill.f != nil, len(s.spill.ring))
	}
	closeDump(t, s)
}
