package git

import (
	"context"
	"regexp"
	"strings"
)

// Config returns the value of key with the user's normal precedence
// (system, global, local, worktree, GIT_CONFIG_COUNT/-c); ok is false when
// the key is unset.
func (r *Repo) Config(ctx context.Context, key string) (value string, ok bool, err error) {
	return r.config(ctx, "", key)
}

// ConfigBool returns key interpreted as a boolean the way git does
// (true/yes/on/1, false/no/off/0, a key with no value is true). An
// unparsable value is an *Error.
func (r *Repo) ConfigBool(ctx context.Context, key string) (value, ok bool, err error) {
	s, ok, err := r.config(ctx, "bool", key)
	if err != nil || !ok {
		return false, ok, err
	}
	return s == "true", true, nil
}

// config runs `git config [--type=<typ>] --get <key>`; exit 1 means unset.
func (r *Repo) config(ctx context.Context, typ, key string) (string, bool, error) {
	if err := checkArg("config key", key); err != nil {
		return "", false, err
	}
	args := []string{"config"}
	if typ != "" {
		args = append(args, "--type="+typ)
	}
	args = append(args, "--get", key)
	out, err := r.run(ctx, call{readOnly: true, args: args})
	if exitStatus(err) == 1 {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	// Values may hold inner newlines; only git's terminator is removed.
	return strings.TrimSuffix(string(out), "\n"), true, nil
}

// ConfigPath returns key as a path, with "~/" expanded the way git expands it.
func (r *Repo) ConfigPath(ctx context.Context, key string) (value string, ok bool, err error) {
	return r.config(ctx, "path", key)
}

// ConfigGet reads key from the repository's config when repo is non-nil, otherwise from
// the config git sees in the current directory (global and system): the hooks read
// their settings this way, also where no repository can be opened.
func ConfigGet(ctx context.Context, repo *Repo, key string) (value string, ok bool, err error) {
	if repo == nil {
		repo = &Repo{}
		return repo.configIn(ctx, ".", key)
	}
	return repo.Config(ctx, key)
}

func (r *Repo) configIn(ctx context.Context, dir, key string) (string, bool, error) {
	if err := checkArg("config key", key); err != nil {
		return "", false, err
	}
	out, err := r.run(ctx, call{readOnly: true, dir: dir, args: []string{"config", "--get", key}})
	if exitStatus(err) == 1 {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return strings.TrimSuffix(string(out), "\n"), true, nil
}

// ConfigSection reads every key of a config section (e.g. "ralph") in one git call,
// with the user's normal precedence (the last value wins). Keys come back as git
// prints them: section and variable name in lower case ("ralph.maxretries"). It reads
// the repository's config when repo is non-nil, otherwise the config git sees in the
// current directory (global and system), so that flag defaults can be read before, or
// without, a repository.
func ConfigSection(ctx context.Context, repo *Repo, section string) (map[string]string, error) {
	dir := ""
	if repo == nil {
		repo, dir = &Repo{}, "."
	}
	if err := checkArg("config section", section); err != nil {
		return nil, err
	}
	out, err := repo.run(ctx, call{readOnly: true, dir: dir,
		args: []string{"config", "-z", "--get-regexp", "^" + regexp.QuoteMeta(section) + `\.`}})
	if exitStatus(err) == 1 {
		return map[string]string{}, nil // no key in that section
	}
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for rec := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if rec == "" {
			continue
		}
		k, v, _ := strings.Cut(rec, "\n") // -z: "key\nvalue"; a key without value has no \n
		m[k] = v
	}
	return m, nil
}

// SetConfig sets key to value in the repository's own config (.git/config).
func (r *Repo) SetConfig(ctx context.Context, key, value string) error {
	if err := checkArg("config key", key); err != nil {
		return err
	}
	_, err := r.run(ctx, call{args: []string{"config", "--local", key, value}})
	return err
}
