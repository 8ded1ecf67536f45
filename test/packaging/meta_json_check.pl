#!/usr/bin/perl
# test/packaging/meta_json_check.pl META.json CONTROL: checks a PGXN META.json
# against the PGXN Meta Spec 1.0.0 (the rules of its v1 JSON schemas: required
# fields and their types, semantic versions, version ranges, tags, licenses,
# provides, prereqs, resources) and against the extension's control file: the
# distribution's and the extension's version are the control file's
# default_version (as a semantic version: '1.1' is 1.1.0), and every
# extension the control file requires is a runtime prerequisite.  Prints one
# line per problem and exits 1 when there is any, else prints nothing.
use strict;
use warnings;
use JSON::PP;

my ($meta_path, $control_path) = @ARGV;
die "usage: $0 META.json CONTROL\n" unless defined $control_path;
my @problems;
sub problem { push @problems, join('', @_); }

my $semver = qr/^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
my $range_one = qr/(?:(?:[=!]=|[<>]=?)\s*)?(?:(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?|0)/;
my %licenses = map { $_ => 1 } qw(agpl_3 apache_1_1 apache_2_0 artistic_1 artistic_2 bsd freebsd
	gfdl_1_2 gfdl_1_3 gpl_1 gpl_2 gpl_3 lgpl_2_1 lgpl_3_0 mit mozilla_1_0 mozilla_1_1 openssl
	perl_5 postgresql qpl_1_0 ssleay sun zlib open_source restricted unrestricted unknown);

sub is_string { my $v = shift; return defined $v && !ref $v && !JSON::PP::is_bool($v); }
sub is_object { return ref($_[0]) eq 'HASH'; }
sub is_array { return ref($_[0]) eq 'ARRAY'; }
sub custom { return $_[0] =~ /^[xX]_./; }
sub only_keys {
	my ($where, $obj, @allowed) = @_;
	my %ok = map { $_ => 1 } @allowed;
	for my $k (sort keys %$obj) {
		problem("$where: unknown key \"$k\"") unless $ok{$k} || custom($k);
	}
}
sub term_ok { my $v = shift; return is_string($v) && $v =~ /^[^\/\\\s[:cntrl:]]{2,}$/; }
sub path_ok {
	my $v = shift;
	return is_string($v) && length $v && $v !~ m{^/} && $v !~ m{\\} && $v !~ m{(^|/)\.\.(/|$)};
}
sub range_ok {
	my $v = shift;
	return 1 if defined $v && !ref $v && $v eq '0';
	return is_string($v) && $v =~ /^$range_one(?:,\s*$range_one)*$/;
}

open my $fh, '<', $meta_path or die "cannot open $meta_path: $!\n";
my $text = do { local $/; <$fh> };
close $fh;
my $meta = eval { JSON::PP->new->relaxed(0)->decode($text) };
if (!$meta) {
	print "$meta_path is not valid JSON: $@";
	exit 1;
}
if (!is_object($meta)) {
	print "$meta_path: the top level is not an object\n";
	exit 1;
}

# the required fields (spec 1.0.0) and their types
for my $k (qw(name version abstract maintainer license provides meta-spec)) {
	problem("missing required field \"$k\"") unless exists $meta->{$k};
}
only_keys('top level', $meta, qw(name version abstract maintainer license provides meta-spec
	description generated_by tags no_index prereqs release_status resources));
problem('name must be a term (2+ characters, no slash, backslash, space or control character)')
	if exists $meta->{name} && !term_ok($meta->{name});
problem('version must be a semantic version (x.y.z)')
	if exists $meta->{version} && !(is_string($meta->{version}) && $meta->{version} =~ $semver);
for my $k (qw(abstract description generated_by)) {
	problem("$k must be a non-empty string")
		if exists $meta->{$k} && !(is_string($meta->{$k}) && length $meta->{$k});
}
if (exists $meta->{maintainer}) {
	my $m = $meta->{maintainer};
	my $ok = (is_string($m) && length $m)
		|| (is_array($m) && @$m && !grep { !(is_string($_) && length $_) } @$m);
	problem('maintainer must be a non-empty string or a non-empty array of them') unless $ok;
}
if (exists $meta->{license}) {
	my $l = $meta->{license};
	my $ok = (is_string($l) && $licenses{$l})
		|| (is_array($l) && @$l && !grep { !(is_string($_) && $licenses{$_}) } @$l)
		|| (is_object($l) && %$l && !grep { !(is_string($_) && /^[a-z][a-z0-9+.-]*:/i) } values %$l);
	problem('license must be a known license name, an array of them, or an object of license URIs') unless $ok;
}
if (exists $meta->{'meta-spec'}) {
	my $s = $meta->{'meta-spec'};
	if (!is_object($s)) {
		problem('meta-spec must be an object');
	} else {
		only_keys('meta-spec', $s, qw(version url));
		problem('meta-spec.version must be "1.0.0"')
			unless is_string($s->{version}) && $s->{version} eq '1.0.0';
		problem('meta-spec.url must be a URI')
			if exists $s->{url} && !(is_string($s->{url}) && $s->{url} =~ /^https?:\/\//);
	}
}
if (exists $meta->{provides}) {
	my $p = $meta->{provides};
	if (!is_object($p) || !%$p) {
		problem('provides must be a non-empty object');
	} else {
		for my $ext (sort keys %$p) {
			my $e = $p->{$ext};
			problem("provides: \"$ext\" is not a term") unless term_ok($ext);
			if (!is_object($e)) { problem("provides.$ext must be an object"); next; }
			only_keys("provides.$ext", $e, qw(file version abstract docfile));
			problem("provides.$ext.file is required") unless exists $e->{file};
			problem("provides.$ext.version is required") unless exists $e->{version};
			for my $f (qw(file docfile)) {
				next unless exists $e->{$f};
				problem("provides.$ext.$f must be a relative unix path") unless path_ok($e->{$f});
				my $dir = $meta_path =~ s{[^/]*$}{}r;
				problem("provides.$ext.$f names \"$e->{$f}\", which the distribution does not hold")
					if path_ok($e->{$f}) && !-f ($dir eq '' ? '.' : $dir) . "/$e->{$f}";
			}
			problem("provides.$ext.version must be a semantic version (x.y.z)")
				if exists $e->{version} && !(is_string($e->{version}) && $e->{version} =~ $semver);
			problem("provides.$ext.abstract must be a non-empty string")
				if exists $e->{abstract} && !(is_string($e->{abstract}) && length $e->{abstract});
		}
	}
}
if (exists $meta->{tags}) {
	my $t = $meta->{tags};
	problem('tags must be a non-empty array of strings of 2 to 255 characters without slash, backslash or control characters')
		unless is_array($t) && @$t
		&& !grep { !(is_string($_) && length($_) >= 2 && length($_) <= 255 && !/[\/\\[:cntrl:]]/) } @$t;
}
if (exists $meta->{release_status}) {
	problem('release_status must be stable, testing or unstable')
		unless is_string($meta->{release_status}) && $meta->{release_status} =~ /^(stable|testing|unstable)$/;
}
if (exists $meta->{prereqs}) {
	my $p = $meta->{prereqs};
	if (!is_object($p) || !%$p) {
		problem('prereqs must be a non-empty object');
	} else {
		only_keys('prereqs', $p, qw(configure build test runtime develop));
		for my $phase (grep { !custom($_) } sort keys %$p) {
			my $ph = $p->{$phase};
			if (!is_object($ph) || !%$ph) { problem("prereqs.$phase must be a non-empty object"); next; }
			only_keys("prereqs.$phase", $ph, qw(requires recommends suggests conflicts));
			for my $rel (grep { !custom($_) } sort keys %$ph) {
				my $r = $ph->{$rel};
				if (!is_object($r)) { problem("prereqs.$phase.$rel must be an object"); next; }
				for my $name (sort keys %$r) {
					problem("prereqs.$phase.$rel.$name: \"", $r->{$name} // 'null', "\" is not a version range")
						unless range_ok($r->{$name});
				}
			}
		}
	}
}
if (exists $meta->{resources}) {
	my $r = $meta->{resources};
	if (!is_object($r) || !%$r) {
		problem('resources must be a non-empty object');
	} else {
		only_keys('resources', $r, qw(homepage bugtracker repository));
		problem('resources.homepage must be a URI')
			if exists $r->{homepage} && !(is_string($r->{homepage}) && $r->{homepage} =~ /^[a-z][a-z0-9+.-]*:/i);
		for my $k (qw(bugtracker repository)) {
			next unless exists $r->{$k};
			if (!is_object($r->{$k}) || !%{$r->{$k}}) { problem("resources.$k must be a non-empty object"); next; }
			only_keys("resources.$k", $r->{$k}, $k eq 'bugtracker' ? qw(web mailto) : qw(url web type));
			for my $f (sort keys %{$r->{$k}}) {
				problem("resources.$k.$f must be a string") unless is_string($r->{$k}{$f});
			}
		}
	}
}

# in step with the control file
open my $cf, '<', $control_path or die "cannot open $control_path: $!\n";
my %control;
while (<$cf>) {
	$control{$1} = $2 if /^\s*(\w+)\s*=\s*'([^']*)'/;
}
close $cf;
my $ext = ($control_path =~ m{([^/]+)\.control$})[0];
my $cv = $control{default_version} // '';
my $want = $cv =~ /^\d+\.\d+$/ ? "$cv.0" : $cv;
problem("version \"", $meta->{version} // '', "\" is not $control_path\'s default_version '$cv' ($want)")
	unless is_string($meta->{version}) && $meta->{version} eq $want;
my $pe = is_object($meta->{provides}) ? $meta->{provides}{$ext} : undef;
if (!is_object($pe)) {
	problem("provides has no entry for the extension \"$ext\"");
} else {
	problem("provides.$ext.version \"", $pe->{version} // '', "\" is not $control_path\'s default_version '$cv' ($want)")
		unless is_string($pe->{version}) && $pe->{version} eq $want;
}
my $req = is_object($meta->{prereqs}) && is_object($meta->{prereqs}{runtime})
	&& is_object($meta->{prereqs}{runtime}{requires}) ? $meta->{prereqs}{runtime}{requires} : {};
for my $dep (split /\s*,\s*/, $control{requires} // '') {
	problem("prereqs.runtime.requires lacks \"$dep\", which $control_path requires") unless exists $req->{$dep};
}
problem('prereqs.runtime.requires lacks PostgreSQL') unless exists $req->{PostgreSQL};

print "$_\n" for @problems;
exit(@problems ? 1 : 0);
