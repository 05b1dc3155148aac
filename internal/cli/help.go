package cli

import "strings"

type helpCmd struct {
	Command []string `arg:"" optional:"" help:"The command to explain."`
}

// Run prints the help of a command, like -h does; `git ralph --help` becomes
// `git help ralph`, which shows the man page that install.sh puts in place.
func (c *helpCmd) Run(e *env) error {
	var r root
	p, err := newParser(&r, e.s, func(int) { panic(exitRequest(0)) }, e.findRepo)
	if err != nil {
		return err
	}
	_, err = p.Parse(append(c.Command, "-h"))
	if err != nil {
		return &usageError{msg: "no command " + strings.Join(c.Command, " "), hint: "git ralph -h lists the commands"}
	}
	return nil
}
