package engine_test

import (
	"bufio"
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
	cmd := exec.Command(strace, "-f", "-qq", "-o", trace, "-e", "trace=openat,fsync,fdatasync,close,link,linkat,mkdirat",
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

	openRE := regexp.MustCompile(`openat\(AT_FDCWD, "([^"]+)", ([^)]*)\) = (\d+)`)
	syncRE := regexp.MustCompile(`f(?:data)?sync\((\d+)\) += 0`)
	closeRE := regexp.MustCompile(`close\((\d+)\)`)
	linkRE := regexp.MustCompile(`link(?:at)?\((?:AT_FDCWD, )?"[^"]+", (?:AT_FDCWD, )?"([^"]+)"`)
	fds := map[string]string{}  // open fd → path (fds are per process: strace -f lines carry the pid)
	synced := map[string]bool{} // paths fsynced
	var written []string        // data, manifest and manifest-list files written after "insert-starts"
	started, linked := false, false
	var afterLink []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "insert-starts") {
			started = true
		}
		if m := openRE.FindStringSubmatch(line); m != nil {
			fds[m[3]] = m[1]
			if started && strings.Contains(m[2], "O_CREAT") && strings.HasPrefix(m[1], wh) && !strings.Contains(m[1], ".tmp-") &&
				(strings.HasSuffix(m[1], ".parquet") || strings.HasSuffix(m[1], ".avro")) {
				written = append(written, m[1])
			}
			continue
		}
		if m := syncRE.FindStringSubmatch(line); m != nil {
			if linked {
				afterLink = append(afterLink, fds[m[1]])
			}
			synced[fds[m[1]]] = true
			continue
		}
		if m := closeRE.FindStringSubmatch(line); m != nil {
			delete(fds, m[1])
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
