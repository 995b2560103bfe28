package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// Load builds the configuration from, by precedence, flags > environment
// (ROBOTSGATE_<FLAG>) > the YAML file (-config or ROBOTSGATE_CONFIG) >
// Default, and validates it. env looks up an environment variable; an
// empty value counts as unset. It returns [flag.ErrHelp] for -h. Errors are
// single lines naming where the bad value came from.
func Load(args []string, env func(string) string) (Config, error) {
	return LoadWith(args, env, FileReader{})
}

// LoadWith is Load with the configuration file read by fr.
func LoadWith(args []string, env func(string) string, fr FileReader) (Config, error) {
	return loadWith(args, env, fr, loadMode{})
}

// LoadKeys is Load for a command that only reads the signing keys
// ("robotsgate signing directory"): signing.agent, which only signed
// requests need, may be empty.
func LoadKeys(args []string, env func(string) string) (Config, error) {
	return loadWith(args, env, FileReader{}, loadMode{keysOnly: true})
}

// LoadWithoutFile is Load without the configuration file that -config or
// ROBOTSGATE_CONFIG names: the defaults, the environment and the flags.
// "robotsgate reload" reads the admin address and token so when the file
// is invalid, to ask the running instance all the same.
func LoadWithoutFile(args []string, env func(string) string) (Config, error) {
	return loadWith(args, env, FileReader{}, loadMode{noFile: true})
}

// loadMode is how [loadWith] loads: keysOnly waives signing.agent, noFile
// skips the configuration file.
type loadMode struct{ keysOnly, noFile bool }

// loadWith is [LoadWith] as mode says.
func loadWith(args []string, env func(string) string, fr FileReader, mode loadMode) (Config, error) {
	var given []flagValue
	var path string
	fs := newFlagSet(&given, &path)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return Config{}, err
		}
		return Config{}, fmt.Errorf("flags: %w", FlagHint(fs, err))
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("flags: unexpected argument %q", fs.Arg(0))
	}
	pathSet := false
	fs.Visit(func(f *flag.Flag) { pathSet = pathSet || f.Name == configFlag.flag })
	if !pathSet {
		path = env(configFlag.env())
	}

	cfg := Default()
	if path != "" && !mode.noFile {
		if err := loadFile(&cfg, path, fr); err != nil {
			return Config{}, err
		}
	}
	for _, o := range options() {
		if v := o.env(); v != "" && env(v) != "" {
			if err := o.set(&cfg, env(v), nil); err != nil {
				return Config{}, fmt.Errorf("%s (%s): %w", v, o.key, err)
			}
		}
	}
	for _, g := range given {
		if err := g.opt.set(&cfg, g.value, nil); err != nil {
			return Config{}, fmt.Errorf("flag -%s (%s): %w", g.opt.flag, g.opt.key, err)
		}
	}
	cfg.keysOnly = mode.keysOnly
	err := cfg.Validate()
	cfg.keysOnly = false
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return cfg, nil
}

// flagValue is a flag given on the command line.
type flagValue struct {
	opt   option
	value string
}

// newFlagSet returns the flag set of the options; given collects the
// flags set, in order, and path receives -config.
func newFlagSet(given *[]flagValue, path *string) *flag.FlagSet {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(path, configFlag.flag, "", configFlag.help+" (env "+configFlag.env()+")")
	def := Default()
	for _, o := range options() {
		if o.flag == "" {
			continue
		}
		usage := fmt.Sprintf("%s (env %s, YAML %s)", o.help, o.env(), o.key)
		record := func(v string) error {
			*given = append(*given, flagValue{opt: o, value: v})
			return nil
		}
		if o.isBool() {
			fs.BoolFunc(o.flag, usage, record) // -allow-open alone means true
		} else {
			fs.Func(o.flag, usage, record)
		}
		fs.Lookup(o.flag).DefValue = o.get(&def) // shown by -h
	}
	return fs
}

// PrintFlags writes the flags of the options, with their environment
// variables, YAML keys and defaults, to w.
func PrintFlags(w io.Writer) {
	var given []flagValue
	var path string
	fs := newFlagSet(&given, &path)
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// loadFile decodes the YAML file at path, read whole by fr, over cfg
// (yaml.go).
func loadFile(cfg *Config, path string, fr FileReader) error {
	b, err := fr.readStable(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	if err := decodeYAML(cfg, b); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	return nil
}
