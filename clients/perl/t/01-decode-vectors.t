# decode() against the shared test vectors: the same file the Go encoder
# tests read, so the Perl decoder and the server agree on the wire format.

use strict;
use warnings;

use FindBin qw($Bin);
use lib "$Bin/lib", "$Bin/../lib";

use Test::More;
use ZRedis::ExpiryListener qw(decode type_name);
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
    for my $field (qw(db type type_code key)) {
        is($msg->{$field}, $v->{expected}{$field}, "$v->{name}: $field");
    }
    is(scalar @{ $msg->{parts} }, scalar @{ $v->{expected}{parts} }, "$v->{name}: item count");
    ok(same_value($msg->{value}, $v->{expected}{value}), "$v->{name}: value");
    ok(same_value($msg->{parts}, $v->{expected}{parts}), "$v->{name}: parts in frame order");
    is(type_name($msg->{type_code}), $v->{type_name}, "$v->{name}: type_name");
    $seen_type{ $v->{type_name} }++;
}

# The file must cover every type the server can send.
for my $type (qw(string hash list set zset stream hash-fields)) {
    ok($seen_type{$type}, "a vector of type $type");
}

done_testing;
