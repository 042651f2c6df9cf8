// GroupMetadata: the member's group id, generation and member id, as a transactional producer
// sends them with the offsets it commits (KIP-447): the broker refuses the commit if the member
// has lost its partitions since (a zombie). Only declared here: librdkafka makes and reads it,
// the parts that pass it along need not include librdkafka.
//
// Thread-safety: a plain owned value.
#pragma once

#include <memory>

typedef struct rd_kafka_consumer_group_metadata_s rd_kafka_consumer_group_metadata_t;

namespace delaybridge::plugin {

using GroupMetadata = std::unique_ptr<rd_kafka_consumer_group_metadata_t,
                                      void (*)(rd_kafka_consumer_group_metadata_t*)>;

}  // namespace delaybridge::plugin
