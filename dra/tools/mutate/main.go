// mutate is a mutation tester for the driver's Go code: it makes small
// faults (mutants) in chosen functions of one file, one at a time, and runs
// the package's tests against each through `go test -overlay`, which leaves
// the file itself untouched. A mutant the tests fail on is killed; one they
// pass survives, and shows a fault the tests would not catch.
//
//	go run ./tools/mutate -file internal/plugin/plugin.go \
//	    -funcs PrepareResourceClaims,prepare,checkOverlap -pkg ./internal/plugin
//
// Mutants: every comparison flipped (== and !=, < and >=, <= and >), every
// && and || swapped, every if condition negated, and every call statement
// and assignment of an error removed. Exit 0 when the share killed is at
// least -min-score, 1 otherwise, 2 for bad flags.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// mutant is one fault: apply changes the tree, undo restores it.
type mutant struct {
	where string
	what  string
	apply func()
	undo  func()
}

func main() {
	file := flag.String("file", "", "Go file to mutate (required)")
	funcs := flag.String("funcs", "", "comma-separated functions and methods of the file to mutate (required)")
	pkg := flag.String("pkg", "", "package whose tests judge the mutants, e.g. ./internal/plugin (required)")
	jobs := flag.Int("jobs", 2, "mutants tested at once")
	timeout := flag.Duration("timeout", 2*time.Minute, "time limit of one mutant's test run")
	minScore := flag.Float64("min-score", 1, "share of mutants the tests must kill, 0..1")
	flag.Parse()
	if *file == "" || *funcs == "" || *pkg == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "mutate: -file, -funcs and -pkg are required (mutate -h)")
		os.Exit(2)
	}
	if *jobs < 1 || *minScore < 0 || *minScore > 1 || *timeout <= 0 {
		fmt.Fprintln(os.Stderr, "mutate: -jobs >= 1, -min-score in 0..1, -timeout > 0")
		os.Exit(2)
	}
	if err := run(*file, strings.Split(*funcs, ","), *pkg, *jobs, *timeout, *minScore); err != nil {
		fmt.Fprintf(os.Stderr, "mutate: %v\n", err)
		os.Exit(1)
	}
}

func run(file string, funcs []string, pkg string, jobs int, timeout time.Duration, minScore float64) error {
	abs, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	tree, err := parser.ParseFile(fset, abs, nil, parser.ParseComments)
	if err != nil {
		return err
	}
	mutants, found := collect(fset, tree, funcs)
	for _, name := range funcs {
		if !found[name] {
			return fmt.Errorf("%s has no function %s", file, name)
		}
	}
	// Render every mutant first (the tree is shared), then test them.
	dir, err := os.MkdirTemp("", "mutate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	sources := make([]string, len(mutants))
	for i, m := range mutants {
		m.apply()
		var buf bytes.Buffer
		err := printer.Fprint(&buf, fset, tree)
		m.undo()
		if err != nil {
			return err
		}
		sources[i] = filepath.Join(dir, fmt.Sprintf("mutant-%03d.go", i))
		if err := os.WriteFile(sources[i], buf.Bytes(), 0o600); err != nil {
			return err
		}
	}
	fmt.Printf("mutate: %d mutants of %s in %s\n", len(mutants), strings.Join(funcs, ", "), file)
	survived := make([]bool, len(mutants))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				killed, why := judge(abs, sources[i], dir, i, pkg, timeout)
				survived[i] = !killed
				state := "killed"
				if !killed {
					state = "SURVIVED"
				}
				fmt.Printf("  %-8s %s: %s%s\n", state, mutants[i].where, mutants[i].what, why)
			}
		}()
	}
	for i := range mutants {
		next <- i
	}
	close(next)
	wg.Wait()
	killed := 0
	for _, s := range survived {
		if !s {
			killed++
		}
	}
	score := 1.0
	if len(mutants) > 0 {
		score = float64(killed) / float64(len(mutants))
	}
	fmt.Printf("mutate: %d of %d mutants killed (%.1f%%)\n", killed, len(mutants), 100*score)
	if score < minScore {
		return fmt.Errorf("%.1f%% killed, below -min-score %.0f%%", 100*score, 100*minScore)
	}
	return nil
}

// judge runs the package's tests with the mutant in place of the file.
func judge(file, mutantFile, dir string, i int, pkg string, timeout time.Duration) (bool, string) {
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {file: mutantFile}})
	overlayFile := filepath.Join(dir, fmt.Sprintf("overlay-%03d.json", i))
	if err := os.WriteFile(overlayFile, overlay, 0o600); err != nil {
		return false, " (" + err.Error() + ")"
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-overlay", overlayFile, pkg)
	out, err := cmd.CombinedOutput()
	switch {
	case err == nil:
		return false, ""
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return true, " (timed out)"
	case bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]")):
		return true, " (does not compile)"
	}
	return true, ""
}

var flips = map[token.Token]token.Token{
	token.EQL: token.NEQ, token.NEQ: token.EQL,
	token.LSS: token.GEQ, token.GEQ: token.LSS,
	token.LEQ: token.GTR, token.GTR: token.LEQ,
	token.LAND: token.LOR, token.LOR: token.LAND,
}

// collect finds the mutants in the bodies of `funcs`.
func collect(fset *token.FileSet, tree *ast.File, funcs []string) ([]mutant, map[string]bool) {
	wanted := map[string]bool{}
	for _, f := range funcs {
		wanted[f] = true
	}
	found := map[string]bool{}
	var out []mutant
	for _, decl := range tree.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || !wanted[fn.Name.Name] || fn.Body == nil {
			continue
		}
		found[fn.Name.Name] = true
		at := func(n ast.Node) string {
			p := fset.Position(n.Pos())
			return fmt.Sprintf("%s:%d (%s)", filepath.Base(p.Filename), p.Line, fn.Name.Name)
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch node := n.(type) {
			case *ast.BinaryExpr:
				if to, ok := flips[node.Op]; ok {
					from := node.Op
					out = append(out, mutant{at(node), fmt.Sprintf("%s -> %s", from, to),
						func() { node.Op = to }, func() { node.Op = from }})
				}
			case *ast.IfStmt:
				cond := node.Cond
				out = append(out, mutant{at(node), "if condition negated",
					func() { node.Cond = &ast.UnaryExpr{Op: token.NOT, X: &ast.ParenExpr{X: cond}} },
					func() { node.Cond = cond }})
			case *ast.BlockStmt:
				for i, stmt := range node.List {
					if !removable(stmt) {
						continue
					}
					i, stmt, list := i, stmt, node.List
					out = append(out, mutant{at(stmt), "statement removed",
						func() { node.List = append(append([]ast.Stmt{}, list[:i]...), list[i+1:]...) },
						func() { node.List = list; _ = stmt }})
				}
			}
			return true
		})
	}
	return out, found
}

// removable: a call statement, or an assignment of a call's results.
func removable(stmt ast.Stmt) bool {
	switch s := stmt.(type) {
	case *ast.ExprStmt:
		_, call := s.X.(*ast.CallExpr)
		return call
	case *ast.AssignStmt:
		if s.Tok == token.DEFINE {
			return false // removing a definition does not compile
		}
		for _, rhs := range s.Rhs {
			if _, call := rhs.(*ast.CallExpr); call {
				return true
			}
		}
		return len(s.Lhs) == 1 && len(s.Rhs) == 1
	}
	return false
}
