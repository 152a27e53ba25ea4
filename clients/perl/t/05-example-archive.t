# The README's worked example, examples/archive-by-day.pl, run as a user
# would: expired hashes land as JSON lines in a file named for the day.

use strict;
use warnings;

use FindBin qw($Bin);
use lib "$Bin/lib", "$Bin/../lib";

use File::Temp qw(tempdir);
use JSON::PP ();
use Test::More;
use ZMQ::FFI ();
use ZMQ::FFI::Constants qw(ZMQ_PUSH ZMQ_SNDTIMEO ZMQ_LAST_ENDPOINT);
use ZRedisTest::Vectors qw(perl_client_dir encode_frames);

my $example = perl_client_dir() . '/examples/archive-by-day.pl';
my $libdir  = perl_client_dir() . '/lib';
my $dir     = tempdir(CLEANUP => 1) . '/archive';

my $ctx  = ZMQ::FFI->new;
my $push = $ctx->socket(ZMQ_PUSH);
$push->set(ZMQ_SNDTIMEO, 'int', 10_000);
$push->set_linger(2000);
$push->bind('tcp://127.0.0.1:*');
my $endpoint = $push->get(ZMQ_LAST_ENDPOINT, 'string');

my $pid = fork // die "fork: $!";
if (!$pid) {
    exec $^X, "-I$libdir", $example, '--endpoint', $endpoint, '--dir', $dir, '--count', 2 or die "exec: $!";
}
$push->send_multipart(encode_frames(0, 1, 'mail:1', [ 'from', 'a@example.org', 'size', '1024' ]));
$push->send_multipart(encode_frames(0, 0, 'lock:1', ['x']));
# A hash's expired fields are not a hash: archived with --all-types only.
$push->send_multipart(encode_frames(0, 6, 'mail:1', [ 'rcpt:2', 'deferred' ]));
$push->send_multipart(encode_frames(4, 1, "mail:\xff", [ 'body', "\x00\xff" ]));

local $SIG{ALRM} = sub { kill 'KILL', $pid };
alarm 60;
waitpid $pid, 0;
alarm 0;
is($?, 0, 'the example exits after --count hashes');

my @files = glob "$dir/*.jsonl";
ok(scalar @files, 'a file per day was written');
like($_, qr{/\d{4}-\d\d-\d\d\.jsonl\z}, "$_ is named for its day") for @files;
my @lines = map { open my $fh, '<:raw', $_ or die "$_: $!"; <$fh> } sort @files;
is(scalar @lines, 2, 'two hashes archived, the string and the hash-fields skipped');
my $json = JSON::PP->new->utf8;
is_deeply($json->decode($lines[0] // '{}'),
    { db => 0, type => 'hash', key => 'mail:1', value => { from => 'a@example.org', size => '1024' } },
    'first hash');
is_deeply($json->decode($lines[1] // '{}'),
    { db => 4, type => 'hash', key => { base64 => 'bWFpbDr/' }, value => { body => { base64 => 'AP8=' } } },
    'second hash, binary key and value as base64');

$push->close;
$ctx->destroy;
done_testing;
