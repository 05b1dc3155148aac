package cli

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/git-ralph/git-ralph/internal/manual"
)

type manCmd struct{}

// Run prints git-ralph(1) in roff: the manual's sections (internal/manual) around the
// command reference, which is generated from the command model so that it cannot drift
// from -h. install.sh writes it to $PREFIX/share/man/man1/git-ralph.1, which is
// what `git ralph --help` (rewritten by git into `git help ralph`) opens.
func (c *manCmd) Run(e *env) error {
	sections, err := manual.Sections()
	if err != nil {
		return err
	}
	return writeMan(e.s.Out, e.parser.Model, sections)
}

func roff(s string) string {
	s = manual.Escape(s)
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'") {
			line = `\&` + line
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// writeMan writes git-ralph(1): the name and synopsis, the manual's DESCRIPTION, the
// command reference generated from the command model (OPTIONS, COMMANDS), then the
// manual's other sections in their order (internal/manual).
func writeMan(out io.Writer, app *kong.Application, sections []manual.Section) error {
	var page bytes.Buffer
	if err := writeManBody(&page, app, sections); err != nil {
		return err
	}
	fmt.Fprintf(out, ".TH GIT-RALPH 1 \"\" \"git-ralph %s\" \"Git Manual\"\n", roff(version()))
	fmt.Fprintln(out, ".nh\n.ad l") // no hyphenation, ragged right: flags and paths stay whole
	io.WriteString(out, manual.Fallbacks(page.String()))
	_, err := page.WriteTo(out)
	return err
}

func writeManBody(w io.Writer, app *kong.Application, sections []manual.Section) error {
	fmt.Fprintln(w, ".SH NAME\ngit-ralph \\- run a coding agent over an OpenSpec change, story by story")
	fmt.Fprintln(w, ".SH SYNOPSIS")
	fmt.Fprintf(w, ".B git ralph\n%s <command> [<args>]\n.br\n", roff(synopsis(app.Node)))
	for _, n := range app.Leaves(true) {
		fmt.Fprintf(w, ".B git ralph %s\n", n.Path())
		if syn := synopsis(n); syn != "" {
			fmt.Fprintln(w, roff(syn))
		}
		fmt.Fprintln(w, ".br")
	}
	for _, s := range sections {
		if s.Title == "DESCRIPTION" {
			if err := s.WriteRoff(w); err != nil {
				return err
			}
		}
	}
	fmt.Fprintln(w, ".SH OPTIONS")
	fmt.Fprintln(w, "These go before the command, or anywhere after it.")
	writeManFlags(w, app.Node)
	fmt.Fprintln(w, ".SH COMMANDS")
	var commands func(nodes []*kong.Node)
	commands = func(nodes []*kong.Node) {
		for _, n := range nodes {
			if n.Hidden {
				continue
			}
			fmt.Fprintf(w, ".SS \"git ralph %s\"\n%s\n", n.Path(), roff(n.Help))
			if n.Detail != "" {
				fmt.Fprintf(w, ".PP\n%s\n", roff(n.Detail))
			}
			writeManFlags(w, n)
			commands(n.Children)
		}
	}
	commands(app.Children)
	for _, s := range sections {
		if s.Title != "DESCRIPTION" {
			if err := s.WriteRoff(w); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeManFlags lists n's own visible flags, written as -h writes them.
func writeManFlags(w io.Writer, n *kong.Node) {
	for _, f := range n.Flags {
		if f.Hidden {
			continue
		}
		help := f.Help
		if len(f.Envs) > 0 {
			help += " ($" + strings.Join(f.Envs, ", $") + ")"
		}
		fmt.Fprintf(w, ".TP\n.B %s\n%s\n", roff(manFlag(f)), roff(help))
	}
}

// manFlag is a flag as kong's -h shows it ("-j, --jobs=N", "--[no-]draft"), and a
// switch with an optional value as "--worktree[=PATH]".
func manFlag(f *kong.Flag) string {
	s := longFlag(f)
	if f.Short != 0 {
		s = "-" + string(f.Short) + ", " + s
	}
	return s
}

// synopsisFlag is a flag as a synopsis shows it: "[-j N | --jobs=N]", "[--fresh]".
func synopsisFlag(f *kong.Flag) string {
	s := longFlag(f)
	if f.Short != 0 {
		short := "-" + string(f.Short)
		if !f.IsBool() && !f.IsCounter() {
			short += " " + f.FormatPlaceHolder()
		}
		s = short + " | " + s
	}
	return s
}

// optionalValue is a switch that may also take a value (--worktree[=PATH]).
type optionalValue interface{ OptionalValue() string }

func longFlag(f *kong.Flag) string {
	s := "--" + f.Name
	switch {
	case f.IsBool() && f.Tag.Negatable == "_":
		s = "--[no-]" + f.Name
	case f.IsBool() && f.Tag.Negatable != "":
		s += "/" + f.Tag.Negatable
	}
	if f.Target.IsValid() && f.Target.CanAddr() {
		if o, ok := f.Target.Addr().Interface().(optionalValue); ok {
			return s + "[=" + o.OptionalValue() + "]"
		}
	}
	if !f.IsBool() && !f.IsCounter() {
		s += "=" + f.FormatPlaceHolder()
	}
	return s
}

// synopsis is the usage of the command n, as its -h usage line has it but with every
// flag: its arguments ("<change> ..." when it takes several), then its flags, a group
// of which exactly one is required written "(--squash | --keep)".
func synopsis(n *kong.Node) string {
	var parts []string
	for _, p := range n.Positional {
		parts = append(parts, p.Summary())
	}
	xor := map[string][]string{}
	for _, f := range n.Flags {
		switch {
		case f.Hidden, f.Name == "help":
		case f.Required && len(f.Xor) > 0: // exactly one of the group: "(--squash | --keep)"
			if xor[f.Xor[0]] == nil {
				parts = append(parts, "\x00"+f.Xor[0])
			}
			xor[f.Xor[0]] = append(xor[f.Xor[0]], synopsisFlag(f))
		default:
			parts = append(parts, "["+synopsisFlag(f)+"]")
		}
	}
	for i, p := range parts {
		if g, ok := strings.CutPrefix(p, "\x00"); ok {
			parts[i] = "(" + strings.Join(xor[g], " | ") + ")"
		}
	}
	return strings.Join(parts, " ")
}
