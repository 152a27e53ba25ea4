# decode() against the shared test vectors: the same file the Go encoder
# tests read, so the Perl decoder and the server agree on the wire format.

use strict;
use warnings;

use FindBin qw($Bin);
use lib "$Bin/lib", "$Bin/../lib";

use Test::More;
use ZRedis::ExpiryListener qw(decode type_name);
use ZRedis::ExpiryListener::Format qw(to_json_line);
use ZRedisTest::Vectors qw(load_vectors vectors_path same_value);

my @vectors = load_vectors();
ok(scalar @vectors, 'vectors loaded from ' . vectors_path());

my %seen_type;
for my $v (@vectors) {
    my $msg = eval { decode($v->{frames}) };
    ok($msg, "$v->{name}: decodes") or diag("error: $@");
    next if !$msg;
    # Compare field by field first: a 10 MB mismatch should name the field,
    # not print the whole value.
    for my $field (qw(db type type_code key id)) {
        is($msg->{$field}, $v->{expected}{$field}, "$v->{name}: $field");
    }
    is(scalar @{ $msg->{parts} }, scalar @{ $v->{expected}{parts} }, "$v->{name}: item count");
    ok(same_value($msg->{value}, $v->{expected}{value}), "$v->{name}: value");
    ok(same_value($msg->{parts}, $v->{expected}{parts}), "$v->{name}: parts in frame order");
    is(type_name($msg->{type_code}), $v->{type_name}, "$v->{name}: type_name");
    $seen_type{ $v->{type_name} }++;
}

# The vectors with a message id (frame 4): the id is made of the time and
# the hash of frames 1 and 2, the same message without it decodes with no
# id, and the JSON line carries it right after the key, as the Go
# listener's does (the lines below are zmqpub.AppendJSON's).
my %json_with_id = (
    'string-with-id' => '{"db":0,"type":"string","key":"lock:q1","id":"1764633600123-c16520f3790e34f7","value":"1"}',
    'hash-with-id'   => '{"db":7,"type":"hash","key":"meta:1","id":"1764633600123-198c09295911914d","value":{"f1":"v1"}}',
    'hash-fields-with-id' => '{"db":1,"type":"hash-fields","key":"mail:43","id":"1-51e22b540333f291","value":{"rcpt:1":"sent"}}',
);
my %with_id = map { $_->{name} => $_ } grep { defined $_->{message_id} } @vectors;
is_deeply([ sort keys %with_id ], [ sort keys %json_with_id ], 'the vectors with a message id');
for my $v (values %with_id) {
    my ($header, $key_frame) = @{ $v->{frames} };
    is("$v->{message_id_at}-" . ZRedis::ExpiryListener::_fnv1a64_hex($header . $key_frame), $v->{message_id},
        "$v->{name}: message_id is message_id_at and the FNV-1a hash of frames 1 and 2");
    is(scalar @{ $v->{frames} }, 4, "$v->{name}: four frames");
    my $msg = decode($v->{frames});
    is($msg->{id}, $v->{message_id}, "$v->{name}: id");
    is(to_json_line($msg), "$json_with_id{ $v->{name} }\n", "$v->{name}: JSON line");
    my $without = decode([ @{ $v->{frames} }[ 0 .. 2 ] ]);
    ok(exists $without->{id} && !defined $without->{id}, "$v->{name}: without frame 4, id is undef");
    is(to_json_line($without), $json_with_id{ $v->{name} } =~ s/,"id":"[^"]*"//r . "\n", "$v->{name}: without frame 4, no id in JSON");
}

# FNV-1a 64 against Go's hash/fnv: the empty string is the offset basis;
# 1000 bytes 0xff carry from the low half into the high one at every step.
is(ZRedis::ExpiryListener::_fnv1a64_hex(''), 'cbf29ce484222325', 'FNV-1a 64 of ""');
is(ZRedis::ExpiryListener::_fnv1a64_hex('a'), 'af63dc4c8601ec8c', 'FNV-1a 64 of "a"');
is(ZRedis::ExpiryListener::_fnv1a64_hex("\xff" x 1000), 'e5f75ff1e6d4e1dd', 'FNV-1a 64 of 1000 bytes 0xff');

# The file must cover every type the server can send.
for my $type (qw(string hash list set zset stream hash-fields)) {
    ok($seen_type{$type}, "a vector of type $type");
}

done_testing;
