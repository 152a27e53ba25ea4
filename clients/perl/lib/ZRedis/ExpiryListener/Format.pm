package ZRedis::ExpiryListener::Format;

# One decoded expiry message as one line of output: JSON (the shape the Go
# listener cmd/zredis-expiry-listen prints) or text for people.

use strict;
use warnings;

use Exporter qw(import);
use MIME::Base64 qw(encode_base64);

our $VERSION = '1.00';

our @EXPORT_OK = qw(to_json_line to_text_line is_utf8_bytes);

# is_utf8_bytes tells whether a byte string is valid UTF-8 by the same rule
# as Go's utf8.Valid: shortest forms only, no surrogates, nothing past
# U+10FFFF; noncharacters such as U+FFFE are valid. utf8::decode refuses
# malformed and overlong sequences but accepts Perl's extensions
# (surrogates, code points past U+10FFFF), so those are refused after it.
sub is_utf8_bytes {
    my ($bytes) = @_;
    return 1 if $bytes !~ /[\x80-\xFF]/;
    my $chars = $bytes;
    return 0 if !utf8::decode($chars);
    no warnings 'utf8';
    return $chars =~ /[\x{D800}-\x{DFFF}]|[^\x{0}-\x{10FFFF}]/ ? 0 : 1;
}

# The escapes JSON requires, plus DEL (as the Go listener writes them).
my %JSON_ESCAPE = (
    (map { chr($_) => sprintf('\\u%04x', $_) } 0x00 .. 0x1F, 0x7F),
    '"'  => '\\"',
    '\\' => '\\\\',
    "\n" => '\\n',
    "\r" => '\\r',
    "\t" => '\\t',
    "\b" => '\\b',
    "\f" => '\\f',
);

# A JSON string literal for valid UTF-8 bytes (bytes pass through; only
# quotes, backslashes and control characters are escaped).
sub _json_text {
    my ($bytes) = @_;
    $bytes =~ s/(["\\\x00-\x1F\x7F])/$JSON_ESCAPE{$1}/g;
    return qq("$bytes");
}

# A message string as JSON: a string when it is valid UTF-8, else
# {"base64":"..."}.
sub _json_bytes {
    my ($bytes) = @_;
    return _json_text($bytes) if is_utf8_bytes($bytes);
    return '{"base64":' . _json_text(encode_base64($bytes, '')) . '}';
}

# An object key must be a string: a field name that is not valid UTF-8 is
# written as "base64:" followed by its base64 form.
sub _json_field_name {
    my ($bytes) = @_;
    return _json_text($bytes) if is_utf8_bytes($bytes);
    return _json_text('base64:' . encode_base64($bytes, ''));
}

my $JSON_NUMBER = qr/\A-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?\z/;
my $INF = 9**9**9;

# A zset score: a JSON number when the text is a finite number, else the
# text ("inf", "-inf").
sub _json_score {
    my ($text) = @_;
    if ($text =~ $JSON_NUMBER) {
        my $n = 0 + $text;
        return $text if $n != $INF && $n != -$INF;
    }
    return _json_bytes($text);
}

# to_json_line($msg) returns {"db":N,"type":"name","key":...,"value":...}
# and a newline, fields in that order, with "id":"<ms>-<hash>" after the key
# for a message that has an id (frame 4). value: a string; a hash (and
# hash-fields, a hash's expired fields) as an object with its fields in
# message order; list/set as an array; zset as an array
# of [member, score]; stream as an array of [id, [field, value, ...]].
sub to_json_line {
    my ($msg) = @_;
    my $parts = $msg->{parts};
    my $type  = $msg->{type};
    my $value;
    if ($type eq 'string') {
        $value = _json_bytes($parts->[0]);
    }
    elsif ($type eq 'hash' || $type eq 'hash-fields') {
        $value = '{' . join(',', map {
            _json_field_name($parts->[ 2 * $_ ]) . ':' . _json_bytes($parts->[ 2 * $_ + 1 ])
        } 0 .. @$parts / 2 - 1) . '}';
    }
    elsif ($type eq 'zset') {
        $value = '[' . join(',', map {
            '[' . _json_bytes($parts->[ 2 * $_ ]) . ',' . _json_score($parts->[ 2 * $_ + 1 ]) . ']'
        } 0 .. @$parts / 2 - 1) . ']';
    }
    elsif ($type eq 'stream') {
        $value = '[' . join(',', map {
            '[' . _json_bytes($_->[0]) . ',[' . join(',', map { _json_bytes($_) } @{ $_->[1] }) . ']]'
        } @$parts) . ']';
    }
    else {
        $value = '[' . join(',', map { _json_bytes($_) } @$parts) . ']';
    }
    return '{"db":' . (0 + $msg->{db})
        . ',"type":' . _json_text($type)
        . ',"key":' . _json_bytes($msg->{key})
        . (defined $msg->{id} ? ',"id":' . _json_text($msg->{id}) : '')
        . ',"value":' . $value . "}\n";
}

# How much of a string and how many items the text format shows.
use constant { TEXT_MAX_BYTES => 256, TEXT_MAX_ITEMS => 16 };

sub _text_quote {
    my ($bytes) = @_;
    my $more = length($bytes) - TEXT_MAX_BYTES;
    $bytes = substr($bytes, 0, TEXT_MAX_BYTES) if $more > 0;
    $bytes =~ s/([\\"])/\\$1/g;
    $bytes =~ s/\n/\\n/g;
    $bytes =~ s/\t/\\t/g;
    $bytes =~ s/([^\x20-\x7E])/sprintf('\\x%02x', ord $1)/ge;
    return qq("$bytes") . ($more > 0 ? "...(+$more bytes)" : '');
}

# to_text_line($msg) returns one line for people: db, type, key, the
# message id if any (unquoted: decode lets only digits, '-' and hex digits
# through) and value, strings quoted with non-printable bytes as \xHH, long
# strings and large collections cut short (with what was left out).
sub to_text_line {
    my ($msg) = @_;
    my $parts = $msg->{parts};
    my $type  = $msg->{type};
    my $value;
    if ($type eq 'string') {
        $value = _text_quote($parts->[0]);
    }
    elsif ($type eq 'stream') {
        # Entries shown as id={field=value ...}, cut short as a collection
        # is, and each entry's pairs too.
        my @shown = map {
            _text_quote($_->[0]) . '=' . _text_items($_->[1], 1)
        } @$parts[ 0 .. _shown(scalar @$parts) - 1 ];
        my $entries = @$parts;
        push @shown, '...(+' . ($entries - TEXT_MAX_ITEMS) . ')' if $entries > TEXT_MAX_ITEMS;
        $value = "$entries {" . join(' ', @shown) . '}';
    }
    else {
        my $paired = $type eq 'hash' || $type eq 'hash-fields' || $type eq 'zset';
        $value = (@$parts / ($paired ? 2 : 1)) . ' ' . _text_items($parts, $paired);
    }
    return "db=$msg->{db} type=$type key=" . _text_quote($msg->{key})
        . (defined $msg->{id} ? " id=$msg->{id}" : '') . " value=$value\n";
}

sub _shown { my ($items) = @_; return $items < TEXT_MAX_ITEMS ? $items : TEXT_MAX_ITEMS }

# {"a" "b"} or, paired, {"f"="v" ...}: the first TEXT_MAX_ITEMS items or
# pairs and how many more there are.
sub _text_items {
    my ($parts, $paired) = @_;
    my $items = @$parts / ($paired ? 2 : 1);
    my @shown = map {
        $paired
            ? _text_quote($parts->[ 2 * $_ ]) . '=' . _text_quote($parts->[ 2 * $_ + 1 ])
            : _text_quote($parts->[$_])
    } 0 .. _shown($items) - 1;
    push @shown, '...(+' . ($items - TEXT_MAX_ITEMS) . ')' if $items > TEXT_MAX_ITEMS;
    return '{' . join(' ', @shown) . '}';
}

1;

__END__

=head1 NAME

ZRedis::ExpiryListener::Format - expiry messages as JSON or text lines

=head1 SYNOPSIS

    use ZRedis::ExpiryListener::Format qw(to_json_line to_text_line);
    print to_json_line($msg);   # {"db":0,"type":"hash","key":"k","value":{"f":"v"}}

=head1 FUNCTIONS

=head2 to_json_line($msg)

One JSON object and a newline, the fields C<db>, C<type> (name), C<key>,
C<id> (only for a message with an id), C<value> in that order: a string value as a JSON string, a hash as an object
(fields in message order), hash-fields (a hash's expired fields) as a hash, a list or set as an array, a zset as an array of
C<[member, score]> with the score a JSON number when finite and the text
(C<"inf">, C<"-inf">) otherwise, a stream as an array of entries
C<[id, [field, value, ...]]> in ID order (as XRANGE replies). Any string that is not valid UTF-8 is
written as C<{"base64":"..."}>; a hash field name that is not valid UTF-8 is
written as the object key C<"base64:..."> (an object key must be a string).
This is the shape the Go listener C<zredis-expiry-listen> prints.

=head2 to_text_line($msg)

C<db=0 type=hash key="k" value=2 {"f1"="v1" "f2"="v2"}>, with
C<id=1764633600123-c16520f3790e34f7> before C<value> for a message with an
id: strings quoted,
non-printable bytes as C<\xHH>, at most 256 bytes of a string and 16 items
of a collection shown (pairs for a hash, hash-fields or zset). A stream shows its entry count and its entries as
C<"1-0"={"f"="v"}>, at most 16 entries and 16 pairs of each.

=head2 is_utf8_bytes($bytes)

True when the bytes are valid UTF-8 (the rule of Go's C<utf8.Valid>).

=cut
