# Perl workload for real_programs.sh: hashes, regular expressions, sort and sprintf over
# generated data, printing results and a checksum, so that two runs on different allocators
# must print exactly the same lines.
use strict;
use warnings;

# A small deterministic generator (perl's rand differs between builds; this does not).
my $state = 123456789;
sub rnd {
    my ($n) = @_;
    $state = ($state * 1103515245 + 12345) % 2147483648;
    return $state % $n;
}

my @syll = qw(ka lo mi nu pe ra si to vu xe ya zo an el in);
sub word {
    my $len = 1 + rnd(4);
    return join '', map { $syll[rnd(scalar @syll)] } 1 .. $len;
}

my $checksum = 0;
for my $round (1 .. 3) {
    # Hashes of arrays and counts, built and then dropped.
    my %count;
    my %index;
    my @lines;
    for my $i (1 .. 25000) {
        my $line = sprintf("%06d %s %s=%d; %s",
                           $i, word(), word(), rnd(100000), word() x (1 + rnd(3)));
        push @lines, $line;
        for my $w ($line =~ /([a-z]{4,})/g) {
            $count{$w}++;
            push @{ $index{substr($w, 0, 2)} }, $i;
        }
    }
    # Regex rewriting and captures.
    my $eq = 0;
    for (@lines) {
        if (/^(\d+) (\w+) (\w+)=(\d+);/) {
            $eq += $4 % 97;
        }
        s/(\w+)=(\d+)/$2=$1/;
    }
    # Sorting by several keys.
    my @top = (sort { $count{$b} <=> $count{$a} || $a cmp $b } keys %count)[0 .. 4];
    my @sorted = sort { length($a) <=> length($b) || $a cmp $b } @lines;
    my $joined = join "\n", @sorted;
    $checksum = ($checksum * 31 + unpack("%32C*", $joined)) % 4294967291;
    printf "round %d: %d words, %d prefixes, eq %d, top %s, longest %d\n",
        $round, scalar(keys %count), scalar(keys %index), $eq, join(',', @top), length($sorted[-1]);
}
printf "checksum %u\n", $checksum;
