package engine_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCommitIsDurable checks, with strace, that an INSERT's commit is on
// disk before it is acknowledged: every data file, manifest and manifest
// list the commit wrote was fsynced, and so was the folder holding its
// name, before the new metadata file was linked into place; and the folder
// was synced after the link. (Before, only the metadata file's contents
// were synced: a crash after COMMIT could leave metadata naming files that
// never reached the disk.)
func TestCommitIsDurable(t *testing.T) {
	if os.Getenv("ICESQL_DURABILITY_CHILD") != "" {
		conn := openDB(t, os.Getenv("ICESQL_DURABILITY_CHILD"))
		mustExec(t, conn, "CREATE DATABASE d", "CREATE TABLE d.t (id BIGINT, s STRING)")
		os.WriteFile(filepath.Join(os.Getenv("ICESQL_DURABILITY_CHILD"), "insert-starts"), nil, 0o644)
		mustExec(t, conn, "INSERT INTO d.t VALUES (1, 'a'), (2, 'b')")
		return
	}
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed (apt-get install strace): it is how this test sees fsync")
	}
	wh := t.TempDir()
	trace := filepath.Join(t.TempDir(), "trace")
	// -y prints the path of each fd a call takes: with files synced on
	// several threads at once, an fd's number may be reused before strace
	// prints the close that freed it.
	cmd := exec.Command(strace, "-f", "-qq", "-y", "-o", trace, "-e", "trace=openat,fsync,fdatasync,close,link,linkat,mkdirat",
		os.Args[0], "-test.run=^TestCommitIsDurable$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ICESQL_DURABILITY_CHILD="+wh)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	f, err := os.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	openRE := regexp.MustCompile(`openat\(AT_FDCWD(?:<[^>]*>)?, "([^"]+)", ([^)]*)\) = \d+`)
	syncRE := regexp.MustCompile(`f(?:data)?sync\(\d+<([^>]+)>\) += 0`)
	linkRE := regexp.MustCompile(`link(?:at)?\((?:AT_FDCWD(?:<[^>]*>)?, )?"[^"]+", (?:AT_FDCWD(?:<[^>]*>)?, )?"([^"]+)"`)
	synced := map[string]bool{} // paths fsynced
	var written []string        // data, manifest and manifest-list files written after "insert-starts"
	started, linked := false, false
	var afterLink []string
	calls, err := straceCalls(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range calls {
		if strings.Contains(line, "insert-starts") {
			started = true
		}
		if m := openRE.FindStringSubmatch(line); m != nil {
			if started && strings.Contains(m[2], "O_CREAT") && strings.HasPrefix(m[1], wh) && !strings.Contains(m[1], ".tmp-") &&
				(strings.HasSuffix(m[1], ".parquet") || strings.HasSuffix(m[1], ".avro")) {
				written = append(written, m[1])
			}
			continue
		}
		if m := syncRE.FindStringSubmatch(line); m != nil {
			if linked {
				afterLink = append(afterLink, m[1])
			}
			synced[m[1]] = true
			continue
		}
		if m := linkRE.FindStringSubmatch(line); m != nil && started && strings.HasSuffix(m[1], ".metadata.json") {
			if len(written) == 0 {
				t.Fatalf("the commit linked %s before writing any file the trace shows", m[1])
			}
			for _, w := range written {
				if !synced[w] {
					t.Errorf("%s was not fsynced before the commit", strings.TrimPrefix(w, wh))
				}
				if !synced[filepath.Dir(w)] {
					t.Errorf("the folder of %s was not fsynced before the commit", strings.TrimPrefix(w, wh))
				}
			}
			linked = true
		}
	}
	if !linked {
		t.Fatal("the trace shows no metadata file linked by the INSERT")
	}
	metaDir := ""
	for _, p := range afterLink {
		if strings.HasSuffix(p, "metadata") {
			metaDir = p
		}
	}
	if metaDir == "" {
		t.Errorf("the metadata folder was not fsynced after the link; synced after it: %q", afterLink)
	}
}

// straceCalls reads an strace -f log as one line per system call, in the
// order the calls returned. A call that another thread's call interrupts
// is split over two lines, "PID name(args <unfinished ...>" and later
// "PID <... name resumed>rest"; the two are joined at the second, since a
// call takes effect when it returns. Commits sync files on several threads
// at once (storage/durable.go), so such splits are the rule in this trace.
func straceCalls(r io.Reader) ([]string, error) {
	const unfinished, resumed = " <unfinished ...>", " resumed>"
	var calls []string
	open := map[string]string{} // pid → the first half of its interrupted call
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		pid, rest, _ := strings.Cut(line, " ")
		switch {
		case strings.HasSuffix(line, unfinished):
			open[pid] = strings.TrimSuffix(line, unfinished)
		case strings.HasPrefix(strings.TrimSpace(rest), "<... "):
			_, tail, ok := strings.Cut(rest, resumed)
			head, started := open[pid]
			if !ok || !started {
				return nil, fmt.Errorf("strace line resumes no call of its thread: %q", line)
			}
			delete(open, pid)
			calls = append(calls, head+tail)
		default:
			calls = append(calls, line)
		}
	}
	return calls, sc.Err()
}
