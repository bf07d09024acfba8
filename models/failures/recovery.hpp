#pragma once
// How long things take to come back after a failure, each with its source. No public measurement exists
// for most of these on GB200 NVL72; those are labelled `assumption` and are inputs (a job mix's
// "recovery" object, `racksim goodput --restart-s ...`), not constants to tune.
#include <string>

namespace racksim {

struct Duration {
  double seconds = 0;
  std::string source;
};

struct RecoveryTimes {
  // Relaunch of a synchronous job: reschedule, start processes, NCCL init, load the last checkpoint.
  Duration restart{600, "assumption: 10 min; recovery is dominated by rescheduling, communicator init and checkpoint "
                        "load (Huawei MindCluster 'Performance Description' splits it into T1-T4; TrainMover, OSDI '26, "
                        "reports minutes for standard restarts and cuts it to ~20 s)"};
  // A compute tray rebooting (host OS, driver, the GPUs re-joining the NVLink fabric).
  Duration tray_reboot{900, "assumption: 15 min for a GB200 compute tray (2 Grace, 4 B200) to reboot and rejoin the "
                            "NVLink domain; no published figure"};
  // A GPU whose XID the driver cannot recover: NVIDIA's recommended ladder is reset_gpu -> restart_os ->
  // service_required (NVIDIA Health Validation, NVLink checks); racksim charges the OS restart.
  Duration gpu_recovery{900, "nvidia-health-validation: reset_gpu -> restart_os -> service_required; assumption: the "
                             "restart_os step, as long as a tray reboot"};
  // A lost NVLink access link: the GPU is parked until the link retrains (a tray reboot) or the tray is serviced.
  Duration link_retrain{900, "assumption: a parked GPU comes back with a tray reboot that retrains its links"};
  // Replacing an NVLink switch tray (or trunk cable cartridge) by hand.
  Duration switch_repair{4 * 3600.0, "assumption: 4 h to replace an NVLink switch tray; no published figure"};
  // Re-creating a partition (e.g. in adaptive-bandwidth mode) through NMX-M's asynchronous REST API.
  Duration repartition{300, "assumption: 5 min; NMX-M partition create/update is an asynchronous operation "
                            "(NMX Manager 'Partitions Management')"};
  // Restarting a dead nvidia-imex daemon.
  Duration imex_restart{60, "assumption: 1 min for systemctl restart nvidia-imex and its peers to reconnect"};
  // Replacing failed hardware (a tray, a GPU board) when no spare takes its place.
  Duration hardware_repair{24 * 3600.0, "assumption: 24 h to replace a failed compute tray"};
};

}  // namespace racksim
