package learn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"vetlens/engine/cardiac"
	"vetlens/engine/manifest"
)

// ShippedAlias names the shipped models wherever a version is asked for.
const ShippedAlias = "shipped"

// Version is one model set the service can use.
type Version struct {
	Name string
	// Dir is where its files are here ("" when only the registry holds
	// them so far).
	Dir string
	// Shipped marks the models shipped with VetLens.
	Shipped bool
	Active  bool
	// Created is when it was promoted (zero for the shipped models).
	Created time.Time
}

var (
	semverRe = regexp.MustCompile(`^v?(\d+)\.(\d+)\.(\d+)`)
	clinicRe = regexp.MustCompile(`-clinic\.(\d+)$`)
	// versionRe is what a version name may look like (it becomes a
	// folder name).
	versionRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,99}$`)
)

// FamilyVersion reads the cardiac family's model_version in a models
// directory.
func FamilyVersion(dir string) (string, error) {
	m, err := manifest.Load(dir)
	if err != nil {
		return "", err
	}
	f, err := m.Family(cardiac.Family)
	if err != nil {
		return "", err
	}
	if f.ModelVersion == "" {
		return "", fmt.Errorf("%s: the cardiac family has no model_version", dir)
	}
	return f.ModelVersion, nil
}

// clinicName is the clinic version name: the shipped version's semver
// with "-clinic.N".
func clinicName(shipped string, n int) (string, error) {
	m := semverRe.FindStringSubmatch(shipped)
	if m == nil {
		return "", fmt.Errorf("shipped model version %q does not start with a semantic version", shipped)
	}
	return fmt.Sprintf("v%s.%s.%s-clinic.%d", m[1], m[2], m[3], n), nil
}

// clinicNumber is N of a "-clinic.N" name, 0 for others.
func clinicNumber(name string) int {
	m := clinicRe.FindStringSubmatch(name)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// dirNames lists the folder names in dir (none when it does not exist).
func dirNames(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && !strings.HasSuffix(e.Name(), ".partial") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// nextVersion is the next clinic version name: N one above every N
// used here (versions, candidates, staging, runs) or in the registry.
func (s *Service) nextVersion(ctx context.Context) (string, error) {
	shipped, err := FamilyVersion(s.cfg.Shipped)
	if err != nil {
		return "", describe("shipped models", err)
	}
	var names []string
	for _, d := range []string{s.cfg.Layout.Versions(), s.cfg.Layout.Candidates(), s.cfg.Layout.Staging()} {
		ns, err := dirNames(d)
		if err != nil {
			return "", describe("list versions", err)
		}
		names = append(names, ns...)
	}
	pub, err := s.cfg.Registry.Published(ctx)
	if err != nil {
		return "", describe("list published versions", err)
	}
	names = append(names, pub...)
	runs, err := s.Runs(ctx)
	if err != nil {
		return "", err
	}
	for _, r := range runs {
		names = append(names, r.Candidate)
	}
	top := 0
	for _, n := range names {
		top = max(top, clinicNumber(n))
	}
	return clinicName(shipped, top+1)
}

// Versions lists the shipped models and every promoted version (here or
// in the registry), oldest first, marking the active one.
func (s *Service) Versions(ctx context.Context) ([]Version, error) {
	shipped, err := FamilyVersion(s.cfg.Shipped)
	if err != nil {
		return nil, describe("shipped models", err)
	}
	active, err := s.cfg.Registry.Active(ctx)
	if err != nil {
		return nil, describe("active version", err)
	}
	out := []Version{{Name: shipped, Dir: s.cfg.Shipped, Shipped: true, Active: active == "" || active == shipped}}
	local, err := dirNames(s.cfg.Layout.Versions())
	if err != nil {
		return nil, describe("list versions", err)
	}
	pub, err := s.cfg.Registry.Published(ctx)
	if err != nil {
		return nil, describe("list published versions", err)
	}
	seen := map[string]bool{shipped: true}
	var rest []Version
	for _, n := range slices.Concat(local, pub) {
		if seen[n] {
			continue
		}
		seen[n] = true
		v := Version{Name: n, Active: n == active}
		dir := filepath.Join(s.cfg.Layout.Versions(), n)
		if st, err := os.Stat(dir); err == nil {
			v.Dir, v.Created = dir, st.ModTime().UTC()
		}
		rest = append(rest, v)
	}
	slices.SortFunc(rest, func(a, b Version) int {
		if c := clinicNumber(a.Name) - clinicNumber(b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return append(out, rest...), nil
}

// Active is the version in use.
func (s *Service) Active(ctx context.Context) (Version, error) {
	vs, err := s.Versions(ctx)
	if err != nil {
		return Version{}, err
	}
	for _, v := range vs {
		if v.Active {
			return v, nil
		}
	}
	a, _ := s.cfg.Registry.Active(ctx)
	return Version{}, fmt.Errorf("the active version %q is not among the versions (its folder was removed?)", a)
}

// resolve returns the directory of version ("" or the shipped name or
// alias: the shipped models), fetching it from the registry into
// versions/ when it is not here.
func (s *Service) resolve(ctx context.Context, version string) (string, error) {
	shipped, err := FamilyVersion(s.cfg.Shipped)
	if err != nil {
		return "", describe("shipped models", err)
	}
	if version == "" || version == ShippedAlias || version == shipped {
		return s.cfg.Shipped, nil
	}
	if !versionRe.MatchString(version) {
		return "", fmt.Errorf("%w: %q", ErrUnknownVersion, version)
	}
	dir := filepath.Join(s.cfg.Layout.Versions(), version)
	if _, err := os.Stat(filepath.Join(dir, manifest.FileName)); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(s.cfg.Layout.Versions(), 0o755); err != nil {
		return "", describe("versions", err)
	}
	tmp := dir + ".fetch.partial"
	os.RemoveAll(tmp)
	if err := s.cfg.Registry.Fetch(ctx, version, tmp); err != nil {
		os.RemoveAll(tmp)
		if errors.Is(err, ErrUnknownVersion) {
			return "", fmt.Errorf("%w: %q", ErrUnknownVersion, version)
		}
		return "", describe("fetch version "+version, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, serr := os.Stat(filepath.Join(dir, manifest.FileName)); serr == nil {
			return dir, nil // another process fetched it first
		}
		return "", describe("fetch version "+version, err)
	}
	return dir, nil
}

// ActiveDir is the directory of the active version (the shipped models
// by default), fetched from the registry when needed.
func (s *Service) ActiveDir(ctx context.Context) (string, error) {
	a, err := s.cfg.Registry.Active(ctx)
	if err != nil {
		return "", describe("active version", err)
	}
	return s.resolve(ctx, a)
}

// Use makes version the active one (a rollback or a return to a later
// version; "shipped" or the shipped name for the shipped models) after
// checking that its models load. Every server following the registry
// swaps to it.
func (s *Service) Use(ctx context.Context, version string) (Version, error) {
	dir, err := s.resolve(ctx, version)
	if err != nil {
		return Version{}, err
	}
	m, err := s.cfg.Models.Open(dir)
	if err != nil {
		return Version{}, fmt.Errorf("version %s does not load: %w", version, err)
	}
	name := m.ModelVersion()
	m.Close()
	rec := name
	if dir == s.cfg.Shipped {
		rec = ""
	}
	if err := s.cfg.Registry.SetActive(ctx, rec); err != nil {
		return Version{}, describe("record active version", err)
	}
	if err := s.Sync(ctx); err != nil {
		return Version{}, err
	}
	return Version{Name: name, Dir: dir, Shipped: rec == "", Active: true}, nil
}

// FileRegistry is the Registry of a single data directory: the active
// version in a JSON file, replaced atomically; the versions' files are
// the folders under versions/.
type FileRegistry struct {
	// Path is the active-version file (Layout.ActiveFile).
	Path string
	// Versions is the versions folder (Layout.Versions).
	Versions string
}

type activeRecord struct {
	Version string    `json:"version"`
	Since   time.Time `json:"since"`
}

// Active reads the file; "" (the shipped models) when there is none.
func (r FileRegistry) Active(context.Context) (string, error) {
	b, err := os.ReadFile(r.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var a activeRecord
	if err := json.Unmarshal(b, &a); err != nil {
		return "", fmt.Errorf("%s: %w", r.Path, err)
	}
	return a.Version, nil
}

// SetActive writes the file through a temporary file and a rename.
func (r FileRegistry) SetActive(_ context.Context, version string) error {
	b, err := json.Marshal(activeRecord{Version: version, Since: time.Now().UTC()})
	if err != nil {
		return err
	}
	return writeAtomic(r.Path, b)
}

// Publish does nothing: the folder is already where every user of this
// data directory reads it.
func (FileRegistry) Publish(context.Context, string, string) error { return nil }

// Fetch has nothing beyond the local folders.
func (FileRegistry) Fetch(context.Context, string, string) error { return ErrUnknownVersion }

// Published lists nothing beyond the local folders.
func (FileRegistry) Published(context.Context) ([]string, error) { return nil, nil }

// writeAtomic replaces path with b (a temporary file, fsync, rename).
func writeAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(append(b, '\n'))
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
