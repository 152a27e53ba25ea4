# The listener over a real libzmq connection: a PUSH socket in this test
# plays the server. run() must hand over every vector decoded exactly, skip
# malformed messages through on_error, and reconnect when the server's
# socket goes away and comes back; the script must print what a user
# expects and exit cleanly on a signal.

use strict;
use warnings;

use FindBin qw($Bin);
use lib "$Bin/lib", "$Bin/../lib";

use Encode ();
use File::Temp qw(tempdir);
use JSON::PP ();
use MIME::Base64 ();
use Test::More;
use ZMQ::FFI ();
use ZMQ::FFI::Constants qw(ZMQ_PUSH ZMQ_SNDTIMEO ZMQ_LAST_ENDPOINT);
use ZRedis::ExpiryListener;
use ZRedisTest::Vectors qw(load_vectors perl_client_dir same_value);

my @vectors = load_vectors();
my $script  = perl_client_dir() . '/bin/zredis-expiry-listener';
my $libdir  = perl_client_dir() . '/lib';

# Malformed messages sent between the vectors, with the reason on_error
# must get.
my @malformed = (
    [ [ pack('S S', 0, 0), pack('L/a*', 'k') ], qr/expected 3 or 4 frames, got 2/ ],
    [ [ "\0\0\0", pack('L/a*', 'k'), pack('L/a*', 'v') ], qr/header frame is 3 bytes/ ],
    [ [ pack('S S', 0, 0), pack('L/a*', 'k'), pack('L', 99) . 'v' ], qr/claims 99 bytes/ ],
    [ [ map { pack('S S', 0, 0) } 1 .. 5 ], qr/expected 3 or 4 frames, got 5/ ],
);

# A PUSH socket bound to a loopback port; sends give up after 10 s rather
# than hang the test when no listener connects.
sub push_socket {
    my ($endpoint) = @_;
    my $ctx  = ZMQ::FFI->new;
    my $push = $ctx->socket(ZMQ_PUSH);
    $push->set(ZMQ_SNDTIMEO, 'int', 10_000);
    $push->set_linger(2000);
    $push->bind($endpoint // 'tcp://127.0.0.1:*');
    return ($ctx, $push, $push->get(ZMQ_LAST_ENDPOINT, 'string'));
}

sub close_push {
    my ($ctx, $push) = @_;
    $push->close;
    $ctx->destroy;
}

# Vectors with a malformed message before every other one.
sub send_all {
    my ($push) = @_;
    for my $i (0 .. $#vectors) {
        $push->send_multipart($malformed[ $i / 2 % @malformed ][0]) if $i % 2 == 0;
        $push->send_multipart($vectors[$i]{frames});
    }
}

sub malformed_sent { return int((@vectors + 1) / 2) }

subtest 'run() receives every vector decoded exactly and skips malformed messages' => sub {
    my ($ctx, $push, $endpoint) = push_socket();
    my @errors;
    my $listener = ZRedis::ExpiryListener->new(
        endpoints => [$endpoint],
        hwm       => 100,
        heartbeat => 1000,
        on_error  => sub { push @errors, $_[0] },
    );
    send_all($push);
    my @got;
    my $handled = $listener->run(sub {
        push @got, $_[0];
        $listener->stop if @got == @vectors;
    });
    is($handled, scalar @vectors, 'run() returns the count handled');
    for my $i (0 .. $#vectors) {
        my ($got, $want) = ($got[$i], $vectors[$i]{expected});
        ok($got && !grep({ !same_value($got->{$_}, $want->{$_}) } keys %$want), "$vectors[$i]{name}: received and decoded exactly");
    }
    is(scalar @errors, malformed_sent(), 'every malformed message reached on_error');
    for my $i (0 .. $#errors) {
        like($errors[$i], $malformed[ $i % @malformed ][1], "malformed message $i: reason");
    }
    $listener->close;
    close_push($ctx, $push);
};

subtest 'the listener reconnects when the server socket goes away and comes back' => sub {
    my ($ctx, $push, $endpoint) = push_socket();
    my $listener = ZRedis::ExpiryListener->new(endpoints => [$endpoint], reconnect_ivl => 50);
    my @got;
    my $take_one = sub { $listener->run(sub { push @got, $_[0]; $listener->stop }) };

    $push->send_multipart($vectors[0]{frames});
    $take_one->();
    close_push($ctx, $push);

    ($ctx, $push) = push_socket($endpoint);
    $push->send_multipart($vectors[1]{frames});
    $take_one->();
    is(scalar @got, 2, 'a message before and one after the restart');
    ok(same_value($got[1]{key}, $vectors[1]{expected}{key}), 'the second one is the one sent after the restart');
    $listener->close;
    close_push($ctx, $push);
};

subtest 'a stop() before run() makes it return at once, and only that run()' => sub {
    my ($ctx, $push, $endpoint) = push_socket();
    my $listener = ZRedis::ExpiryListener->new(endpoints => [$endpoint]);
    $push->send_multipart($vectors[0]{frames});
    $listener->stop;
    is($listener->run(sub { }), 0, 'the first run() returns without a message');
    my @got;
    is($listener->run(sub { push @got, $_[0]; $listener->stop }), 1, 'the next run() receives');
    ok(same_value($got[0]{key}, $vectors[0]{expected}{key}), 'the message sent');
    $listener->close;
    close_push($ctx, $push);
};

# start_script runs the script as a user would, stdout to a pipe and stderr
# to a file; returns (pid, stdout handle, stderr path).
my $tmp = tempdir(CLEANUP => 1);
sub start_script {
    my (@args) = @_;
    my $stderr = "$tmp/stderr-" . scalar(@args) . '-' . time;
    my $pid = open(my $out, '-|') // die "fork: $!";
    if (!$pid) {
        open STDERR, '>', $stderr or die "stderr: $!";
        exec $^X, "-I$libdir", $script, @args or die "exec: $!";
    }
    binmode $out;
    return ($pid, $out, $stderr);
}

# finish reads the rest of a script's output until it exits and returns
# (output, wait status). A script still running after 60 s is killed, so a
# broken script fails the test instead of hanging it.
sub finish {
    my ($pid, $out) = @_;
    local $SIG{ALRM} = sub { kill 'KILL', $pid };
    alarm 60;
    my $output = do { local $/; <$out> };
    close $out;    # waits for the child and sets $?
    my $status = $?;
    alarm 0;
    return ($output // '', $status);
}

sub slurp { open my $fh, '<', $_[0] or return ''; local $/; return <$fh> }

subtest 'the script prints one JSON line per message and exits after --count' => sub {
    my ($ctx, $push, $endpoint) = push_socket();
    my ($pid, $out, $stderr) = start_script('--endpoint', $endpoint, '--format', 'json', '--count', scalar @vectors);
    send_all($push);
    my ($output, $status) = finish($pid, $out);
    is($status, 0, 'exit status 0');
    my @lines = split /(?<=\n)/, $output;
    is(scalar @lines, scalar @vectors, 'one line per well-formed message');
    my $json = JSON::PP->new->utf8;
    for my $i (0 .. $#vectors) {
        my $line = $lines[$i] // '';
        like($line, qr/\A\{"db":\d+,"type":"[a-z]+(?:-[a-z]+)?","key":.*(?:,"id":"[0-9]+-[0-9a-f]{16}")?,"value":.*\}\n\z/s, "$vectors[$i]{name}: fields db, type, key, id, value in order");
        my $got = eval { $json->decode($line) };
        is_deeply($got, expected_json($vectors[$i]{expected}), "$vectors[$i]{name}: JSON content")
            or diag(substr($line, 0, 500));
    }
    my $errors = () = slurp($stderr) =~ /skipped a malformed message/g;
    is($errors, malformed_sent(), 'each malformed message reported on stderr');
    close_push($ctx, $push);
};

# The Go listener prints the same bytes for the same messages, in both
# formats.
my $go_listener = ZRedisTest::Vectors::repo_root() . '/bin/zredis-expiry-listen';
# make test sets ZREDIS_TEST_REQUIRE_ALL: a missing listener fails there.
BAIL_OUT("$go_listener is not built (make build)")
    if !-x $go_listener && ($ENV{ZREDIS_TEST_REQUIRE_ALL} // "") !~ /^0?\z/;
SKIP: {
    skip "$go_listener is not built (make build): no comparison with the Go listener", 2 if !-x $go_listener;
    for my $format (qw(json text)) {
        subtest "the script prints the same $format lines as the Go listener" => sub {
            my %output;
            for my $listener ('perl', 'go') {
                my ($ctx, $push, $endpoint) = push_socket();
                my @args = ('--endpoint', $endpoint, '--format', $format, '--count', scalar @vectors);
                my $pid = open(my $out, '-|') // die "fork: $!";
                if (!$pid) {
                    open STDERR, '>', '/dev/null';
                    exec $listener eq 'go' ? ($go_listener, @args) : ($^X, "-I$libdir", $script, @args) or die "exec: $!";
                }
                binmode $out;
                send_all($push);
                (my $status, $output{$listener}) = (finish($pid, $out))[ 1, 0 ];
                is($status, 0, "$listener listener: exit status 0");
                close_push($ctx, $push);
            }
            my @perl = split /(?<=\n)/, $output{perl};
            my @go   = split /(?<=\n)/, $output{go};
            is(scalar @perl, scalar @vectors, 'perl: a line per vector');
            is(scalar @go, scalar @vectors, 'go: a line per vector');
            for my $i (0 .. $#vectors) {
                ok(defined $perl[$i] && defined $go[$i] && $perl[$i] eq $go[$i], "$vectors[$i]{name}: same line")
                    or diag('perl: ' . substr($perl[$i] // '', 0, 300) . "\ngo:   " . substr($go[$i] // '', 0, 300));
            }
        };
    }
}

subtest 'the script keeps a hash field order and prints the text and dots formats' => sub {
    my ($ctx, $push, $endpoint) = push_socket();
    my $ordered = ZRedisTest::Vectors::encode_frames(3, 1, 'h', [ 'zz', '1', 'aa', '2', 'mm', "\xff" ]);
    for my $case (
        [ 'json', qr/\A\{"db":3,"type":"hash","key":"h","value":\{"zz":"1","aa":"2","mm":\{"base64":"\/w=="\}\}\}\n\z/ ],
        [ 'text', qr/\Adb=3 type=hash key="h" value=3 \{"zz"="1" "aa"="2" "mm"="\\xff"\}\n\z/ ],
        [ 'dots', qr/\A\.\n\z/ ],
    ) {
        my ($format, $want) = @$case;
        my ($pid, $out) = start_script('-e', $endpoint, '--format', $format, '-n', 1);
        $push->send_multipart($ordered);
        my ($output, $status) = finish($pid, $out);
        is($status, 0, "$format: exit status 0");
        like($output, $want, "$format: output");
    }
    close_push($ctx, $push);
};

for my $signal (qw(INT TERM)) {
    subtest "the script exits cleanly on SIG$signal" => sub {
        my ($ctx, $push, $endpoint) = push_socket();
        my ($pid, $out) = start_script('--endpoint', $endpoint, '--format', 'dots');
        # A dot on the pipe proves the script is inside run(), with its
        # handlers in place.
        $push->send_multipart($vectors[0]{frames});
        my $dot = '';
        sysread $out, $dot, 1;
        is($dot, '.', 'a message was received');
        kill $signal, $pid;
        my ($rest, $status) = finish($pid, $out);
        is($status, 0, 'exit status 0');
        is($rest, "\n", 'the dots line is ended');
        close_push($ctx, $push);
    };
}

subtest 'the script refuses bad usage' => sub {
    my ($output, $status) = finish(start_script('--format', 'json'));
    is($status >> 8, 2, 'no endpoint: exit status 2');
    ($output, $status) = finish(start_script('--help'));
    is($status, 0, '--help: exit status 0');
    like($output, qr/--endpoint/, '--help describes the options');
};

# expected_json is what the JSON line of a message must decode to.
sub expected_json {
    my ($want) = @_;
    my $text = sub {
        my ($bytes) = @_;
        my $chars = eval { Encode::decode('UTF-8', $bytes, Encode::FB_CROAK | Encode::LEAVE_SRC) };
        return defined $chars ? $chars : { base64 => MIME::Base64::encode_base64($bytes, '') };
    };
    my $parts = $want->{parts};
    my $value;
    if ($want->{type} eq 'string') {
        $value = $text->($parts->[0]);
    }
    elsif ($want->{type} eq 'hash' || $want->{type} eq 'hash-fields') {
        # A field name that is not UTF-8 cannot be an object key as
        # {"base64":...}: it is written as "base64:...".
        my $name = sub { my $t = $text->($_[0]); ref $t ? "base64:$t->{base64}" : $t };
        $value = { map { ($name->($parts->[ 2 * $_ ]), $text->($parts->[ 2 * $_ + 1 ])) } 0 .. @$parts / 2 - 1 };
    }
    elsif ($want->{type} eq 'zset') {
        $value = [ map { [ $text->($parts->[ 2 * $_ ]), $parts->[ 2 * $_ + 1 ] ] } 0 .. @$parts / 2 - 1 ];
    }
    elsif ($want->{type} eq 'stream') {
        # As XRANGE replies: [id, [field, value, ...]].
        $value = [ map { [ $text->($_->[0]), [ map { $text->($_) } @{ $_->[1] } ] ] } @$parts ];
    }
    else {
        $value = [ map { $text->($_) } @$parts ];
    }
    return { db => $want->{db}, type => $want->{type}, key => $text->($want->{key}),
        (defined $want->{id} ? (id => $want->{id}) : ()), value => $value };
}


done_testing;
