package git

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// configCache is the repository's whole config as `git config -z --list` prints it
// (every scope, includes followed, in git's order of precedence), read once by the
// first question about a key: a start asks about a dozen keys, and each used to cost
// a git process. SetConfig drops it. An error reading it is not kept: the questions
// then go to git one by one, which reports what is wrong with the file.
type configCache struct {
	mu    sync.Mutex
	vals  map[string][]configValue // by canonical key
	files []string                 // the files the values came from (--show-origin), in order, once each
}

// configValue is one value of a key; set is false for a key written without "=",
// which git reads as true (and as "" where a string is asked for).
type configValue struct {
	s   string
	set bool
}

// canonicalKey is how git names a key in its listing: section and variable name in
// lower case, a subsection as written ("remote.Origin.URL" -> "remote.Origin.url").
func canonicalKey(key string) string {
	first, last := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
	if first < 0 {
		return strings.ToLower(key)
	}
	return strings.ToLower(key[:first]) + key[first:last] + strings.ToLower(key[last:])
}

// cached returns the values of key from the cached listing (read now if need be); ok
// is false when the listing could not be read, in which case the caller asks git.
func (r *Repo) cached(ctx context.Context, key string) (vals []configValue, ok bool) {
	r.cfg.mu.Lock()
	defer r.cfg.mu.Unlock()
	if r.cfg.vals == nil {
		out, err := r.run(ctx, call{readOnly: true, args: []string{"config", "-z", "--show-origin", "--list"}})
		if err != nil {
			return nil, false
		}
		m := map[string][]configValue{}
		var files []string
		recs := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		for i := 0; i+1 < len(recs); i += 2 { // -z --show-origin: "origin", "key\nvalue"
			if f, ok := strings.CutPrefix(recs[i], "file:"); ok && !slices.Contains(files, f) {
				files = append(files, f)
			}
			k, v, set := strings.Cut(recs[i+1], "\n") // a key without value has no \n
			m[k] = append(m[k], configValue{v, set})
		}
		r.cfg.vals, r.cfg.files = m, files
	}
	return r.cfg.vals[canonicalKey(key)], true
}

// FilterCommands are the commands of the filter drivers the config names
// (filter.<driver>.clean and .process, the ones git add runs), by key; git-lfs's are left
// out, since they run no file of the work tree. Nil when the listing cannot be read.
func (r *Repo) FilterCommands(ctx context.Context) map[string]string {
	if _, ok := r.cached(ctx, "core.bare"); !ok {
		return nil
	}
	r.cfg.mu.Lock()
	defer r.cfg.mu.Unlock()
	out := map[string]string{}
	for k, vals := range r.cfg.vals {
		if !strings.HasPrefix(k, "filter.") || !(strings.HasSuffix(k, ".clean") || strings.HasSuffix(k, ".smudge") || strings.HasSuffix(k, ".process")) || len(vals) == 0 {
			continue
		}
		cmd := vals[len(vals)-1].s
		if f := strings.Fields(cmd); cmd == "" || len(f) > 0 && (f[0] == "git-lfs" || f[0] == "git" && len(f) > 1 && f[1] == "lfs") {
			continue
		}
		out[k] = cmd
	}
	return out
}

// ConfigFiles are the files the repository's config was read from, in git's order
// (system, global, local, worktree, and the files they include), as git names them: an
// absolute path, or one relative to the repository's top directory (the local
// config, ".git/config"). Nil when the listing cannot be read.
func (r *Repo) ConfigFiles(ctx context.Context) []string {
	if _, ok := r.cached(ctx, "core.bare"); !ok {
		return nil
	}
	r.cfg.mu.Lock()
	defer r.cfg.mu.Unlock()
	return slices.Clone(r.cfg.files)
}

// dropConfigCache forgets the cached listing, after git-ralph changed the config.
func (r *Repo) dropConfigCache() {
	r.cfg.mu.Lock()
	r.cfg.vals = nil
	r.cfg.mu.Unlock()
}

// Config returns the value of key with the user's normal precedence
// (system, global, local, worktree, GIT_CONFIG_COUNT/-c); ok is false when
// the key is unset.
func (r *Repo) Config(ctx context.Context, key string) (value string, ok bool, err error) {
	if err := checkArg("config key", key); err != nil {
		return "", false, err
	}
	if vals, read := r.cached(ctx, key); read {
		if len(vals) == 0 {
			return "", false, nil
		}
		return vals[len(vals)-1].s, true, nil // the last value wins, as with --get
	}
	return r.config(ctx, "", key)
}

// ConfigBool returns key interpreted as a boolean the way git does
// (true/yes/on/1, false/no/off/0, a key with no value is true). An
// unparsable value is an *Error.
func (r *Repo) ConfigBool(ctx context.Context, key string) (value, ok bool, err error) {
	if err := checkArg("config key", key); err != nil {
		return false, false, err
	}
	if vals, read := r.cached(ctx, key); read {
		if len(vals) == 0 {
			return false, false, nil
		}
		v := vals[len(vals)-1]
		if !v.set {
			return true, true, nil
		}
		switch strings.ToLower(v.s) {
		case "true", "yes", "on", "1":
			return true, true, nil
		case "false", "no", "off", "0", "":
			return false, true, nil
		}
		// Anything else (2k, a typo) is git's to read and to refuse.
	}
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
	if err := checkArg("config key", key); err != nil {
		return "", false, err
	}
	if vals, read := r.cached(ctx, key); read {
		if len(vals) == 0 {
			return "", false, nil
		}
		// git expands a leading ~ and %(prefix)/: leave those to git.
		if v := vals[len(vals)-1]; v.set && !strings.HasPrefix(v.s, "~") && !strings.HasPrefix(v.s, "%(prefix)/") {
			return v.s, true, nil
		}
	}
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
	if dir == "" {
		if _, read := repo.cached(ctx, section+".x"); read {
			repo.cfg.mu.Lock()
			defer repo.cfg.mu.Unlock()
			m := map[string]string{}
			prefix := strings.ToLower(section) + "."
			for k, vals := range repo.cfg.vals {
				if strings.HasPrefix(k, prefix) {
					m[k] = vals[len(vals)-1].s
				}
			}
			return m, nil
		}
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
	r.dropConfigCache()
	return err
}

// ConfigPathAll returns every value of the multi-valued key, in order, each as a path
// ("~/" expanded the way git expands it): from the cached listing, or from `git config
// --type=path --get-all` when a value needs git's expansion or the listing could not be
// read.
func (r *Repo) ConfigPathAll(ctx context.Context, key string) ([]string, error) {
	if err := checkArg("config key", key); err != nil {
		return nil, err
	}
	if vals, read := r.cached(ctx, key); read {
		out := make([]string, 0, len(vals))
		for _, v := range vals {
			if !v.set || strings.HasPrefix(v.s, "~") || strings.HasPrefix(v.s, "%(prefix)/") {
				out = nil
				break
			}
			out = append(out, v.s)
		}
		if out != nil {
			return out, nil
		}
	}
	out, err := r.run(ctx, call{readOnly: true, args: []string{"config", "--type=path", "-z", "--get-all", key}})
	if exitStatus(err) == 1 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var vals []string
	for v := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		vals = append(vals, v)
	}
	return vals, nil
}
