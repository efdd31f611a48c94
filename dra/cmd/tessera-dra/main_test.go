package main

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every bad command line is a usage error (exit 2) naming the flag or
// command at fault, before anything connects anywhere.
func TestBadCommandLinesNameTheirFlag(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	two := filepath.Join(dir, "two")
	kubeconfig := filepath.Join(dir, "kubeconfig")
	for path, text := range map[string]string{empty: "\n", two: "a b\n", kubeconfig: "not: [yaml"} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	cases := []struct {
		args  []string
		names string
	}{
		{nil, "a command is needed"},
		{[]string{"schedule"}, `unknown command "schedule"`},
		{[]string{"controller"}, "--tessera"},
		{[]string{"controller", "--tessera", "https://x:1"}, "--tessera"},
		{[]string{"controller", "--tessera", "http://x:1,"}, "--tessera"},
		{[]string{"controller", "--tessera", "http://x:1/v1"}, "--tessera"},
		{[]string{"controller", "--tessera", "http://x:"}, "--tessera"},
		{[]string{"controller", "--tessera", "x:1"}, "--tessera"},
		{[]string{"controller", "--tessera", "http://x:1", "--publish", "some"}, "--publish"},
		{[]string{"controller", "--tessera", "http://x:1", "--timeout", "0s"}, "--timeout"},
		{[]string{"controller", "--tessera", "http://x:1", "--timeout", "-1s"}, "--timeout"},
		{[]string{"controller", "--tessera", "http://x:1", "--timeout", "11m"}, "--timeout"},
		{[]string{"controller", "--tessera", "http://x:1", "--timeout", "soon"}, "-timeout"},
		{[]string{"controller", "--tessera", "http://x:1", "--token-file", filepath.Join(dir, "none")}, "--token-file"},
		{[]string{"controller", "--tessera", "http://x:1", "--token-file", empty}, "--token-file"},
		{[]string{"controller", "--tessera", "http://x:1", "--token-file", two}, "--token-file"},
		{[]string{"controller", "--tessera", "http://x:1", "--status-listen", "nowhere"}, "--status-listen"},
		{[]string{"controller", "--tessera", "http://x:1", "--kubeconfig", filepath.Join(dir, "none")}, "--kubeconfig"},
		{[]string{"controller", "--tessera", "http://x:1", "--kubeconfig", kubeconfig}, "--kubeconfig"},
		{[]string{"controller", "--tessera", "http://x:1"}, "--kubeconfig"}, // not in a pod
		{[]string{"controller", "--tessera", "http://x:1", "extra"}, `unexpected argument "extra"`},
		{[]string{"controller", "--no-such-flag"}, "no-such-flag"},
		{[]string{"kubelet-plugin"}, "--node"},
		{[]string{"prepare", "default/a/uid"}, "--socket"},
		{[]string{"prepare", "--socket", "s"}, "no claim given"},
		{[]string{"unprepare", "--socket", "s", "default/a"}, "NAMESPACE/NAME/UID"},
		{[]string{"unprepare", "--socket", "s", "default//uid"}, "NAMESPACE/NAME/UID"},
		{[]string{"prepare", "--socket", "s", "--timeout", "0s", "a/b/c"}, "--timeout"},
		{[]string{"kubelet-plugin", "--node", "n", "--kubeconfig", filepath.Join(dir, "none")}, "--kubeconfig"},
		{[]string{"kubelet-plugin", "--node", "n", "--state-dir", empty + "/sub"}, "--state-dir"},
		{[]string{"kubelet-plugin", "--node", "n", "--cdi-dir", empty + "/sub", "--state-dir", dir}, "--cdi-dir"},
	}
	for _, c := range cases {
		err := run(c.args, io.Discard, io.Discard)
		var bad usageError
		if !errors.As(err, &bad) {
			t.Errorf("%v: want a usage error, got %v", c.args, err)
			continue
		}
		if !strings.Contains(err.Error(), c.names) {
			t.Errorf("%v: %q does not name %q", c.args, err, c.names)
		}
	}
}

func TestHelpIsNotAnError(t *testing.T) {
	var out strings.Builder
	if err := run([]string{"--help"}, &out, io.Discard); err != nil || !strings.Contains(out.String(), "tessera-dra controller") {
		t.Fatalf("%v: %s", err, out.String())
	}
	for command, flagName := range map[string]string{"controller": "-kubeconfig", "kubelet-plugin": "-node", "prepare": "-socket"} {
		var usage strings.Builder
		if err := run([]string{command, "-h"}, io.Discard, &usage); !errors.Is(err, flag.ErrHelp) || !strings.Contains(usage.String(), flagName) {
			t.Fatalf("%s -h: %v: %s", command, err, usage.String())
		}
	}
}
