package agent

import (
	"fmt"
	"slices"
	"strings"
)

// drivers returns every known driver, sorted by name.
func drivers() []Driver {
	return []Driver{Amp{}, Claude{}, Codex{}, Copilot{}, Cursor{}, Custom{}, Gemini{}, OpenCode{}, Qwen{}}
}

// Lookup returns the driver called name. For an unknown name the error lists
// the known ones.
func Lookup(name string) (Driver, error) {
	for _, d := range drivers() {
		if d.Name() == name {
			return d, nil
		}
	}
	return nil, fmt.Errorf("unknown agent %q (known agents: %s)", name, strings.Join(Names(), ", "))
}

// Names returns the names of the known drivers, sorted.
func Names() []string {
	var names []string
	for _, d := range drivers() {
		names = append(names, d.Name())
	}
	slices.Sort(names)
	return names
}
