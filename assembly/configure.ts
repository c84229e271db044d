// configure(): sets up hot-key detection once, before any decision, from the parameters the
// TS side wrote at PARAMS (params.ts): each module sizes its regions (carved out of the arena,
// memory.ts) and reads its options.

import { decayConfigure } from "./decay";
import { eventsConfigure } from "./events";
import { topicsConfigure } from "./topics";
import { admissionConfigure } from "./admission";
import { choiceConfigure } from "./choice";
import { decideConfigure, EVENT_RESERVE } from "./decide";
import { param, intParam } from "./params";
import { P_ENTRIES, P_TOPICS, P_PARTITIONS, P_GROWTH, P_LOAD_GROWTH } from "./abi";

export function configure(): void {
  admissionConfigure();
  decayConfigure(param(P_GROWTH), param(P_LOAD_GROWTH));
  choiceConfigure();
  decideConfigure();
  topicsConfigure(intParam(P_TOPICS), intParam(P_PARTITIONS));
  eventsConfigure(intParam(P_ENTRIES) + EVENT_RESERVE);
}
