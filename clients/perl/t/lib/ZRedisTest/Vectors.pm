package ZRedisTest::Vectors;

# The shared expiry test vectors (testdata/expiry-vectors.json at the repo
# root, also read by the Go and Python tests), turned into frames and the
# message decode() must return for them.

use strict;
use warnings;

use Carp qw(croak);
use Cwd qw(abs_path);
use Digest::SHA qw(sha256_hex);
use Exporter qw(import);
use File::Basename qw(dirname);
use File::Spec;
use JSON::PP ();

our @EXPORT_OK = qw(repo_root perl_client_dir vectors_path load_vectors encode_frames same_value);

# This file is clients/perl/t/lib/ZRedisTest/Vectors.pm.
sub perl_client_dir { return abs_path(File::Spec->catdir(dirname(__FILE__), '..', '..', '..')) }
sub repo_root       { return abs_path(File::Spec->catdir(perl_client_dir(), '..', '..')) }

sub vectors_path { return File::Spec->catfile(repo_root(), 'testdata', 'expiry-vectors.json') }

my @TYPE_NAMES = qw(string hash list set zset stream hash-fields);

# encode_frames builds the three frames of a message the way the server
# does (native byte order); parts as in decode's "parts" (for a stream,
# type 5, the entries [id, [field, value, ...]]; for hash-fields, type 6,
# field, value, ... as for a hash).
sub encode_frames {
    my ($db, $type_code, $key, $parts) = @_;
    my $value = $type_code == 0
        ? pack('L/a*', $parts->[0])
        : $type_code == 5
        ? pack('L', scalar @$parts) . join('', map {
            pack('L/a*', $_->[0]) . pack('L', scalar @{ $_->[1] }) . join('', map { pack 'L/a*', $_ } @{ $_->[1] })
        } @$parts)
        : pack('L', scalar @$parts) . join('', map { pack 'L/a*', $_ } @$parts);
    return [pack('S S', $db, $type_code), pack('L/a*', $key), $value];
}

# load_vectors returns the vectors, each with:
#   name, and the fields of the file
#   frames    the three frames (frame 3 generated for the *_gen forms and
#             checked against frame3_len and frame3_sha256), and the message
#             id as frame 4 for a vector with message_id
#   expected  what decode() returns for them
sub load_vectors {
    my $path = vectors_path();
    open my $fh, '<:raw', $path or croak "open $path: $!";
    my $doc = JSON::PP->new->decode(do { local $/; <$fh> });
    close $fh;
    croak "$path: byte_order is $doc->{byte_order}, this machine is little-endian"
        if $doc->{byte_order} ne 'little' || pack('S', 1) ne "\x01\x00";
    return map { _prepare($_) } @{ $doc->{vectors} };
}

sub _prepare {
    my ($v) = @_;
    my $code = $v->{type};
    croak "$v->{name}: type_name $v->{type_name} does not match type $code"
        if ($TYPE_NAMES[$code] // '') ne $v->{type_name};
    my $key = pack 'H*', $v->{key_hex};

    my (@parts, $value);
    if ($code == 0) {
        my $bytes = exists $v->{value_gen}
            ? _generated_string($v->{value_gen}{len})
            : pack('H*', $v->{value_hex});
        @parts = ($bytes);
        $value = $bytes;
    }
    elsif ($code == 1 || $code == 6) {
        # A hash, or a hash's expired fields (hash-fields): fields_hex.
        if (exists $v->{fields_gen}) {
            @parts = map { ("field:$_", "value:$_") } 0 .. $v->{fields_gen}{count} - 1;
        }
        else {
            @parts = map { (pack('H*', $_->[0]), pack('H*', $_->[1])) } @{ $v->{fields_hex} };
        }
        $value = {@parts};
    }
    elsif ($code == 2 || $code == 3) {
        @parts = map { pack 'H*', $_ } @{ $v->{members_hex} };
        $value = [@parts];
    }
    elsif ($code == 5) {
        croak "$v->{name}: a stream vector without entries" if ref $v->{entries} ne 'ARRAY';
        @parts = map {
            [ $_->{id}, [ map { (pack('H*', $_->[0]), pack('H*', $_->[1])) } @{ $_->{fields_hex} } ] ]
        } @{ $v->{entries} };
        $value = [ map { [ $_->[0], [ @{ $_->[1] } ] ] } @parts ];
    }
    elsif ($code == 4) {
        @parts = map { (pack('H*', $_->[0]), $_->[1]) } @{ $v->{pairs} };
        $value = [map { [ pack('H*', $_->[0]), $_->[1] ] } @{ $v->{pairs} }];
    }

    my @frames = map { defined $_ ? pack('H*', $_) : undef } @{ $v->{frames_hex} };
    croak "$v->{name}: frames_hex has " . scalar(@frames) . ' frames' if @frames != 3;
    if (!defined $frames[2]) {
        my $frame3 = encode_frames($v->{db}, $code, $key, \@parts)->[2];
        croak "$v->{name}: generated frame 3 is " . length($frame3) . " bytes, the file says $v->{frame3_len}"
            if length $frame3 != $v->{frame3_len};
        croak "$v->{name}: generated frame 3 does not match frame3_sha256"
            if sha256_hex($frame3) ne lc $v->{frame3_sha256};
        $frames[2] = $frame3;
    }
    push @frames, $v->{message_id} if defined $v->{message_id};

    return {
        %$v,
        frames   => \@frames,
        expected => {
            db        => $v->{db},
            type      => $v->{type_name},
            type_code => $code,
            key       => $key,
            value     => $value,
            parts     => \@parts,
            (defined $v->{message_id} ? (id => $v->{message_id}) : ()),
        },
    };
}

# same_value compares decoded values (strings, hash and array references)
# without printing them: the large vectors would fill a screen.
sub same_value {
    my ($got, $want) = @_;
    return 0 if ref $got ne ref $want;
    if (ref $want eq 'HASH') {
        return 0 if keys %$got != keys %$want;
        for my $k (keys %$want) {
            return 0 if !exists $got->{$k} || !same_value($got->{$k}, $want->{$k});
        }
        return 1;
    }
    if (ref $want eq 'ARRAY') {
        return 0 if @$got != @$want;
        for my $i (0 .. $#$want) {
            return 0 if !same_value($got->[$i], $want->[$i]);
        }
        return 1;
    }
    return defined $got && defined $want && $got eq $want;
}

# value_gen: byte i is i % 251.
sub _generated_string {
    my ($len) = @_;
    my $cycle = pack 'C*', 0 .. 250;
    my $bytes = $cycle x int($len / 251 + 1);
    return substr $bytes, 0, $len;
}

1;
