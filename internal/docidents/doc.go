// Package docidents holds the test that keeps the words around the code
// true to it: every code identifier docs/architecture.md names exists, in
// the file or package the page puts it in, and every Go doc link
// (`[Name]`, `[pkg.Name]`) and code-shaped name in a comment resolves.
//
// The package has no code of its own; run it with go test.
package docidents
