package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHelp: --help prints the command's help on stdout and exits 0, and
// the help describes every flag the command accepts.
func TestHelp(t *testing.T) {
	bin := buildBinary(t)
	for _, args := range [][]string{{"--help"}, {"help"}, {"-h"}, {"serve", "--help"}, {"serve", "-h"}, {"sql", "--help"}} {
		cmd := exec.Command(bin, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("icesql %s: %v (want exit 0)\n%s", strings.Join(args, " "), err, stderr.String())
		}
		if stderr.Len() > 0 || !strings.Contains(stdout.String(), "Usage") {
			t.Errorf("icesql %s: stdout\n%s\nstderr\n%s\nwant the help on stdout only", strings.Join(args, " "), stdout.String(), stderr.String())
		}
	}

	commands := map[string]*flag.FlagSet{"serve": serveFlags(io.Discard).fs, "sql": sqlFlags(io.Discard).fs}
	for name, fs := range commands {
		help := commandUsage(name)
		fs.VisitAll(func(f *flag.Flag) {
			dashes := "--"
			if len(f.Name) == 1 {
				dashes = "-"
			}
			if !strings.Contains(help, dashes+f.Name+" ") && !strings.Contains(help, dashes+f.Name+"=") &&
				!strings.Contains(help, dashes+f.Name+",") && !strings.Contains(help, dashes+f.Name+"\n") {
				t.Errorf("icesql %s --help does not describe %s%s", name, dashes, f.Name)
			}
			if !strings.Contains(usage, dashes+f.Name) {
				t.Errorf("icesql --help does not describe %s%s", dashes, f.Name)
			}
		})
	}

	// A bad flag is an error on stderr with exit status 2.
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "serve", "--no-such-flag")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(stderr.String(), "no-such-flag") || stdout.Len() > 0 {
		t.Errorf("serve --no-such-flag: %v\nstdout %s\nstderr %s", err, stdout.String(), stderr.String())
	}
}

// TestWarehouseMustExist: a mistyped --warehouse is an error, --create
// makes the folder, and the README's ./warehouse is created without it.
func TestWarehouseMustExist(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	missing := filepath.Join(dir, "no", "such")
	for _, command := range []string{"serve", "sql"} {
		args := []string{command, "--warehouse", missing}
		if command == "sql" {
			args = append(args, "-e", "SELECT 1")
		} else {
			args = append(args, "--addr", freeAddr(t))
		}
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "does not exist") || !strings.Contains(string(out), "--create") {
			t.Errorf("icesql %s on a missing warehouse: %v\n%s", command, err, out)
		}
		if _, err := os.Stat(missing); err == nil {
			t.Fatalf("icesql %s created %s without --create", command, missing)
		}
	}
	out, err := exec.Command(bin, "sql", "--warehouse", missing, "--create", "-e", "CREATE DATABASE d").CombinedOutput()
	if err != nil {
		t.Fatalf("sql --create: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(missing, "d")); err != nil {
		t.Errorf("sql --create: no database folder: %v", err)
	}

	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	if out, err := exec.Command(bin, "sql", "--warehouse", file, "-e", "SELECT 1").CombinedOutput(); err == nil || !strings.Contains(string(out), "is a file") {
		t.Errorf("sql on a file: %v\n%s", err, out)
	}

	// The default ./warehouse, named or not, is created.
	for _, args := range [][]string{{"sql", "-e", "SELECT 1"}, {"sql", "--warehouse", "./warehouse", "-e", "SELECT 1"}} {
		cwd := t.TempDir()
		cmd := exec.Command(bin, args...)
		cmd.Dir = cwd
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("icesql %s in an empty folder: %v\n%s", strings.Join(args, " "), err, out)
		}
		if st, err := os.Stat(filepath.Join(cwd, "warehouse")); err != nil || !st.IsDir() {
			t.Errorf("icesql %s did not create ./warehouse: %v", strings.Join(args, " "), err)
		}
	}
}
